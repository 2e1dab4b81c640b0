export declare const entryPath: string;
export declare const bundlePath: string;
export declare function buildCatalogValidator(): Promise<string>;
