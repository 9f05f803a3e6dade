/* The step queue: a ring of QUEUE_CAP steps, run in order. */
#ifndef ROBOTD_QUEUE_H
#define ROBOTD_QUEUE_H
#include <stdint.h>
#include "step.h"

void queue_clear(void);
uint8_t queue_count(void);
/* Slot for the next step; the caller fills it and calls queue_commit(). NULL when full. */
struct step *queue_slot(void);
void queue_commit(void);
/* Oldest step, left in the queue; NULL when empty. */
const struct step *queue_peek(void);
/* Oldest step, removed from the queue; NULL when empty. Valid until the next commit. */
const struct step *queue_pop(void);
#endif
