/* Millisecond clock from Timer0 (CTC, 1 kHz). */
#ifndef ROBOTD_CLOCK_H
#define ROBOTD_CLOCK_H
#include <stdint.h>
void clock_init(void);
uint32_t clock_ms(void);
#endif
