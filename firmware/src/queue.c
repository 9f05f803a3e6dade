/* Step queue: fixed ring, no allocation. Used from the main loop only. */
#include "queue.h"
#include "config.h"

static struct step ring[QUEUE_CAP];
static uint8_t head, count;

void queue_clear(void) { head = 0; count = 0; }

uint8_t queue_count(void) { return count; }

struct step *queue_slot(void)
{
    if (count >= QUEUE_CAP)
        return 0;
    return &ring[(uint8_t)(head + count) % QUEUE_CAP];
}

void queue_commit(void) { count++; }

const struct step *queue_peek(void)
{
    return count ? &ring[head] : 0;
}

const struct step *queue_pop(void)
{
    if (count == 0)
        return 0;
    const struct step *s = &ring[head];
    head = (uint8_t)(head + 1) % QUEUE_CAP;
    count--;
    return s;
}
