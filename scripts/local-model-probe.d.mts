export interface ProbeTarget {
  port: number;
  name: string;
}
export interface FoundServer extends ProbeTarget {
  baseUrl: string;
  model: string;
  toolCapable: boolean;
}
export declare function probeTargets(env: Record<string, string | undefined>, ownPort: number): ProbeTarget[];
export declare function findLocalModelServer(targets: ProbeTarget[], model: string | undefined): Promise<{ found?: FoundServer; empty: ProbeTarget[] }>;
export declare function pickModel(ids: string[]): string | undefined;
