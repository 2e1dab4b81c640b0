import type { Budget } from "../../catalog/catalog-schema";
import type { BudgetKind } from "./run-types";

/**
 * The run's counted budgets (steps and wall clock are enforced by the loop's stop condition and
 * the abort signal). Tool calls of one step execute in parallel, so `tryStartToolCall` checks and
 * counts in one synchronous call.
 */
export class RunBudget {
  toolCallsUsed = 0;
  outputTokensUsed = 0;
  /** Set once a call was refused for max_tool_calls: the loop stops after that step. */
  toolCallsRefused = false;

  constructor(readonly limits: Budget) {}

  tryStartToolCall(): boolean {
    if (this.toolCallsUsed >= this.limits.max_tool_calls) {
      this.toolCallsRefused = true;
      return false;
    }
    this.toolCallsUsed++;
    return true;
  }

  toolCallsLeft(): number {
    return Math.max(0, this.limits.max_tool_calls - this.toolCallsUsed);
  }

  addOutputTokens(tokens: number | undefined): void {
    this.outputTokensUsed += tokens ?? 0;
  }

  remainingOutputTokens(): number {
    return Math.max(0, this.limits.max_output_tokens - this.outputTokensUsed);
  }

  outputTokensSpent(): boolean {
    return this.remainingOutputTokens() === 0;
  }

  /** Whether a counted budget says the loop must not start another step. */
  mustStop(): boolean {
    return this.toolCallsRefused || this.outputTokensSpent();
  }

  /**
   * Which budget cut the run short, given how its last step ended; null when the model finished
   * on its own. A step that still wanted tools, or was cut at its token limit, did not finish.
   */
  exhaustedBy(lastFinishReason: string | undefined, stepsTaken: number): BudgetKind | null {
    if (this.toolCallsRefused) return "tool_calls";
    const unfinished = lastFinishReason === "tool-calls" || lastFinishReason === "length";
    if (!unfinished) return null;
    if (this.outputTokensSpent() || lastFinishReason === "length") return "output_tokens";
    if (stepsTaken >= this.limits.max_steps) return "steps";
    return null;
  }
}
