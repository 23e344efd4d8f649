/** Asks for the API key when the server answered 401; the key is kept for this tab only. */
import { useState } from 'preact/hooks';

export function KeyPrompt({ wrong, onKey }: { wrong: boolean; onKey: (key: string) => void }) {
  const [key, setKey] = useState('');
  return (
    <form
      class="key-prompt"
      data-testid="key-prompt"
      onSubmit={(event) => {
        // Handled here: the page never navigates (and its CSP allows no form action).
        event.preventDefault();
        if (key !== '') onKey(key);
      }}
    >
      <h2>API key</h2>
      <p>
        This kith server requires an API key (<code>-api-key</code>). It is sent as the <code>api-key</code> header and kept in this tab's session storage only.
      </p>
      {wrong ? <p class="error">The server did not accept that key.</p> : null}
      <input type="password" name="api-key" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} aria-label="API key" />
      <button type="submit">Use key</button>
    </form>
  );
}
