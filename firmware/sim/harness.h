/* The simavr harness that runs a board's firmware binary as the host sees it: robotd's own
 * firmware, or a stock Marlin / grbl build (shared/stock-firmware).
 * One process: the AVR core, its UART0 bridged to a pseudo-terminal, its
 * STEP/DIR/EN pins watched per axis, simulated time locked to the wall clock.
 * Events for the Python side go to stdout, one line each (see main.c). */
#ifndef ROBOTD_HARNESS_H
#define ROBOTD_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <simavr/sim_avr.h>

#define AXES 6

struct pin { char port; uint8_t bit; };
struct axis_pins { const char *name; struct pin step, dir, en; };

/* pins_ramps.c / pins_header.c: the firmware's own pin maps (firmware/src/pins.h), axes U R F D L B;
 * pins_stock.c: the stock firmware builds' RAMPS map, axes X Y Z A B C */
extern const struct axis_pins ramps_pins[AXES];
extern const struct axis_pins header_pins[AXES];
extern const struct axis_pins stock_pins[AXES];

/* axes.c: step counting and the mechanics of each face */
struct axes_config {
    const struct axis_pins *pins;
    int32_t steps_per_quarter[AXES];
    int8_t reversed[AXES];          /* DIR low is the positive direction (--dir-positive low, or a
                                       motor mounted the other way round: --reversed) */
    FILE *trace;                    /* "S cycle axis forward" per STEP edge, "E cycle axis on" per EN change */
    double jam_deg;                 /* --jam-deg: a face that leaves aligned while an adjacent face is further
                                       off than this jams the cube (axes in the order U R F D L B, opposite
                                       faces three apart); below 0: no jams */
};
void axes_attach(avr_t *avr, const struct axes_config *config, FILE *events);
void axes_report(FILE *out);        /* positions and enable mask, for SYNC */
uint64_t axes_edge_count(void);

/* uart_bridge.c: UART0 <-> pseudo-terminal */
/* returns the master fd; trace (or NULL) gets "R cycle" / "T cycle" for each line end in / out */
int bridge_open(avr_t *avr, const char *link_path, FILE *events, FILE *trace);
void bridge_service(avr_t *avr);    /* read the pty, feed the UART, write pending output */
int bridge_attached(void);
void bridge_unplug(void);
int bridge_fd(void);
void bridge_reset_input(void);

#endif
