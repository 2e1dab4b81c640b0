/** What the SDK clients' `experimental.tasks.callToolStream` yields, as far as the tests read it. */
interface TaskStreamMessage {
  type: string;
  result?: unknown;
  error?: unknown;
}

/**
 * Reads a 2025-11-25 task's `callToolStream` to its end: the message types in order and the
 * result's content as JSON text; an error message throws. `onCreated` runs once the task exists
 * (a test releases its held model there).
 */
export async function readTaskStream(stream: AsyncIterable<TaskStreamMessage>, onCreated: () => void): Promise<{ seen: string[]; text: string }> {
  const seen: string[] = [];
  let text = "";
  for await (const message of stream) {
    seen.push(message.type);
    if (message.type === "taskCreated") onCreated();
    if (message.type === "result")
      text = JSON.stringify(typeof message.result === "object" && message.result !== null ? Reflect.get(message.result, "content") : undefined);
    if (message.type === "error") throw message.error;
  }
  return { seen, text };
}
