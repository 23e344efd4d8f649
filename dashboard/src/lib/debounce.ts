/** A Preact hook: the value, once it has stopped changing for `ms` milliseconds. */
import { useEffect, useState } from 'preact/hooks';

export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
