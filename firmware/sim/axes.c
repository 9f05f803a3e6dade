/* Turns STEP/DIR/EN pin changes into motor positions and face turns.
 * A face has turned when its motor's position reaches another multiple of
 * the steps per quarter turn: "TURN cycle axis quarter_index" is printed at
 * that step edge, before the firmware can report the move done.
 *
 * With --jam-deg the cube has a geometry: a face that leaves an aligned position while an
 * adjacent face is further than that from aligned jams the cube ("JAM cycle axis blocking_axis
 * degrees"); a jammed cube turns no more (its motors' steps are still counted). */
#include <stdlib.h>
#include <simavr/avr_ioport.h>
#include <simavr/sim_io.h>
#include "harness.h"

struct axis_state {
    int index;
    int dir_level, en_level, step_level;
    int32_t position;
    int32_t quarter;                /* last multiple of steps_per_quarter reached */
};

static struct axis_state state[AXES];
static const struct axes_config *cfg;
static FILE *events_out;
static avr_t *core;
static uint64_t edges;
static int jammed;

/* Degrees from the nearest aligned position of an axis's face. */
static double off_aligned_deg(const struct axis_state *a)
{
    int32_t spq = cfg->steps_per_quarter[a->index];
    int32_t r = ((a->position % spq) + spq) % spq;
    return 90.0 * (r < spq - r ? r : spq - r) / spq;
}

/* Called before a's step: a face leaving aligned needs every adjacent face within the tolerance. */
static void check_jam(const struct axis_state *a)
{
    if (cfg->jam_deg < 0 || jammed || a->position % cfg->steps_per_quarter[a->index] != 0)
        return;
    for (int j = 0; j < AXES; j++) {
        if (j == a->index || j == (a->index + AXES / 2) % AXES)
            continue;
        double off = off_aligned_deg(&state[j]);
        if (off > cfg->jam_deg) {
            jammed = 1;
            fprintf(events_out, "JAM %llu %s %s %.2f\n", (unsigned long long)core->cycle,
                    cfg->pins[a->index].name, cfg->pins[j].name, off);
            fflush(events_out);
            return;
        }
    }
}

static void on_step(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    struct axis_state *a = param;
    int rising = value && !a->step_level;
    a->step_level = value ? 1 : 0;
    if (!rising)
        return;
    int forward = a->dir_level ^ cfg->reversed[a->index];
    check_jam(a);
    a->position += forward ? 1 : -1;
    edges++;
    if (cfg->trace)
        fprintf(cfg->trace, "S %llu %d %d\n", (unsigned long long)core->cycle, a->index, forward);
    int32_t spq = cfg->steps_per_quarter[a->index];
    if (!jammed && a->position % spq == 0 && a->position / spq != a->quarter) {
        a->quarter = a->position / spq;
        fprintf(events_out, "TURN %llu %s %ld\n", (unsigned long long)core->cycle, cfg->pins[a->index].name,
                (long)a->quarter);
        fflush(events_out);
    }
}

static void on_dir(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    ((struct axis_state *)param)->dir_level = value ? 1 : 0;
}

static void on_enable(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    struct axis_state *a = param;
    if ((value ? 1 : 0) == a->en_level)
        return;
    a->en_level = value ? 1 : 0;       /* the drivers' EN input is active low */
    if (cfg->trace)
        fprintf(cfg->trace, "E %llu %d %d\n", (unsigned long long)core->cycle, a->index, !a->en_level);
    fprintf(events_out, "EN %llu %s %d\n", (unsigned long long)core->cycle, cfg->pins[a->index].name, !a->en_level);
    fflush(events_out);
}

static void watch(avr_t *avr, struct pin pin, avr_irq_notify_t hook, void *param)
{
    avr_irq_t *irq = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(pin.port), IOPORT_IRQ_PIN0 + pin.bit);
    if (!irq) {
        fprintf(stderr, "avrsim: no port %c on this MCU\n", pin.port);
        exit(2);
    }
    avr_irq_register_notify(irq, hook, param);
}

void axes_attach(avr_t *avr, const struct axes_config *config, FILE *events)
{
    events_out = events;
    cfg = config;
    core = avr;
    for (int i = 0; i < AXES; i++) {
        state[i] = (struct axis_state){.index = i, .en_level = 1};
        watch(avr, config->pins[i].step, on_step, &state[i]);
        watch(avr, config->pins[i].dir, on_dir, &state[i]);
        watch(avr, config->pins[i].en, on_enable, &state[i]);
    }
}

void axes_report(FILE *out)
{
    int mask = 0;
    for (int i = 0; i < AXES; i++) {
        fprintf(out, " %s=%ld", cfg->pins[i].name, (long)state[i].position);
        mask |= (!state[i].en_level) << i;
    }
    fprintf(out, " enabled=%d", mask);
}

uint64_t axes_edge_count(void)
{
    return edges;
}
