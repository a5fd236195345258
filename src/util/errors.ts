// The one way a caught value becomes message text: its message for an Error, else its string form.
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
