export declare const LOCAL_ADMIN_TOKEN_FILE: string;
export declare function localAdminToken(base: string, cwd: string): { token: string; file: string } | undefined;
