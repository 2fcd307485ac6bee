// A Map used as a least-recently-used cache: entries are kept in use order, newest last.

/** Sets `key` to `value` as the newest entry of `map`, dropping the oldest past `max` entries; returns `value`. */
export function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): V {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value!);
  return value;
}

/** The entry for `key`, made the newest; undefined when there is none. */
export function recall<K, V>(map: Map<K, V>, key: K): V | undefined {
  const value = map.get(key);
  if (value !== undefined) remember(map, key, value, Number.POSITIVE_INFINITY);
  return value;
}
