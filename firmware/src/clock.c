/* Timer0 in CTC mode, prescaler 64: 16 MHz / 64 / 250 = 1 kHz. */
#include <avr/io.h>
#include <avr/interrupt.h>
#include <util/atomic.h>
#include "clock.h"

static volatile uint32_t ms;

void clock_init(void)
{
    TCCR0A = _BV(WGM01);
    OCR0A = (uint8_t)(F_CPU / 64 / 1000 - 1);   /* non-zero before the interrupt is on */
    TIMSK0 = _BV(OCIE0A);
    TCCR0B = _BV(CS01) | _BV(CS00);
}

ISR(TIMER0_COMPA_vect) { ms++; }

uint32_t clock_ms(void)
{
    uint32_t now;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { now = ms; }
    return now;
}
