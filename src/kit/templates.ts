export async function prepareTemplates(_options: { deterministic: boolean; env: Record<string, string> }): Promise<void> {}
export async function prepareTemplatesCommand(): Promise<void> {}
