/**
 * The API key the user typed, kept for this tab only (sessionStorage): closing the tab forgets it,
 * and other sites cannot read it.
 */
const KEY = 'kith.apiKey';

export function loadKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function saveKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}
