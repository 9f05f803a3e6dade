/* The probing loops of closed.py's hash table, compiled: one key at a time, in order.
 *
 * A key is two uint64 words (corners, edges: KEY_DTYPE), its home slot computed by closed.py, so the
 * hash lives in one place. Slots hold a key and an int32 node id, EMPTY where free; linear probing.
 * Entering keys in order gives what closed.py's batched claims give: each new key's first occurrence
 * is fresh, numbered in order from first_id; a key entered before the batch reports its id.
 */
#include <stdint.h>

#define EMPTY (-1)

/* Returns how many keys were fresh; their indices are in fresh[0..count). seen[i]: the id of key i if it
 * was entered before this batch, else EMPTY. */
int64_t closed_add(const uint64_t *keys, const int64_t *homes, int64_t n, uint64_t *table_keys,
                   int32_t *table_ids, int64_t mask, int32_t first_id, int64_t *fresh, int64_t *seen)
{
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t corners = keys[2 * i], edges = keys[2 * i + 1];
        int64_t slot = homes[i];
        seen[i] = EMPTY;
        for (;;) {
            int32_t id = table_ids[slot];
            if (id == EMPTY) {
                table_keys[2 * slot] = corners;
                table_keys[2 * slot + 1] = edges;
                table_ids[slot] = first_id + (int32_t)count;
                fresh[count++] = i;
                break;
            }
            if (table_keys[2 * slot] == corners && table_keys[2 * slot + 1] == edges) {
                if (id < first_id)
                    seen[i] = id;
                break;
            }
            slot = (slot + 1) & mask;
        }
    }
    return count;
}

/* Enter distinct keys, none in the table yet, under the given ids (a table being grown). */
void closed_place(const uint64_t *keys, const int64_t *homes, const int32_t *ids, int64_t n,
                  uint64_t *table_keys, int32_t *table_ids, int64_t mask)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t slot = homes[i];
        while (table_ids[slot] != EMPTY)
            slot = (slot + 1) & mask;
        table_keys[2 * slot] = keys[2 * i];
        table_keys[2 * slot + 1] = keys[2 * i + 1];
        table_ids[slot] = ids[i];
    }
}
