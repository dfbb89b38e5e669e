// Moments in forms: a datetime-local input's value (this browser's zone) and an ISO date-time.

/** `2024-02-15T12:00` (a datetime-local value, this browser's zone) from an ISO date-time, and back. */
export const localValue = (iso: string) => {
  if (!iso) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
export const isoFromLocal = (value: string) => (value ? new Date(value).toISOString() : '');
