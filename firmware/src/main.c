/* robotd-avr: six-axis stepper firmware for an ATmega2560 speaking docs/protocol.md.
 * The main loop never blocks: bytes in, motion bookkeeping, heartbeat and watchdog.
 * Step pulses come from the Timer1 interrupt (stepper.c). */
#include <avr/interrupt.h>
#include <avr/wdt.h>
#include "boot_id.h"
#include "clock.h"
#include "motion.h"
#include "protocol.h"
#include "stepper.h"
#include "uart.h"

static void hardware_init(void)
{
    MCUSR = 0;
    wdt_disable();
    stepper_init();                     /* drivers off (EN high) before anything else */
    motion_init();
    clock_init();
    uart_init();
    boot_id_next();
}

int main(void)
{
    hardware_init();
    sei();
    protocol_boot();
    for (;;) {
        int16_t c;
        while ((c = uart_getc()) >= 0)
            protocol_byte((char)c);
        motion_poll();
        protocol_poll();
    }
}
