#define _GNU_SOURCE
/* avrsim: run a firmware .elf for the ATmega2560 under simavr, as the host sees a board.
 *
 *   avrsim [--board ramps|header|stock] [--steps N | --steps U=N,R=N,...] [--reversed AXES]
 *          [--dir-positive high|low] [--speed X] [--reset-on-open] [--boot-on-open]
 *          [--trace FILE] [--link PATH] [--jam-deg DEG] FIRMWARE.elf
 *
 * --board picks the pin map: ramps and header are robotd's (axes U R F D L B), stock the RAMPS map of the
 * stock Marlin / grbl builds (axes X Y Z A B C). --steps and --reversed name axes of that map; the events
 * name them too. --dir-positive low: DIR low steps forward (grbl); --reversed flips single axes on top.
 * --boot-on-open: the MCU is held in reset until a host first opens the port, so it hears the boot text
 * (output is dropped while no host has the port open); simulated time starts then.
 * --jam-deg: the cube jams when a face starts turning while an adjacent one is further than DEG from aligned.
 *
 * stdout, one line per event:  PTY <path> | TURN <cycle> <face> <quarter> | EN <cycle> <face> <0|1>
 *   | RESET <cycle> <why> | SYNC <cycle> <wall_s> U=<steps> ... enabled=<mask> | HUNG <cycle> | UNPLUGGED <cycle>
 *   | JAM <cycle> <face> <blocking face> <degrees off>
 *   | BOOT <cycle> (--boot-on-open: a host opened the port, the MCU runs from now)
 *   | STOPPED done|crashed <cycle>
 *   | STATS cycles=<n> wall_s=<s> edges=<n>
 * stdin, one command per line: SYNC, RESET, HANG, UNPLUG, QUIT (end of input also quits).
 * Simulated time runs at --speed times the wall clock (default 1; 0: as fast as it goes). */
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <simavr/avr_ioport.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_io.h>
#include "harness.h"

#define MCUSR_ADDR 0x54              /* the ATmega2560's MCU status register (reset causes) */
#define EXTRF_BIT 0x02
#define SLICE_CYCLES 4000           /* 250 us at 16 MHz between looks at the pty and the clock */

struct options {
    const char *board, *elf, *link, *trace;
    const char *steps, *reversed, *dir_positive;
    double speed, jam_deg;
    int reset_on_open, boot_on_open;
};

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void no_sleep(avr_t *avr, avr_cycle_count_t how_long)
{
    (void)avr; (void)how_long;     /* the main loop keeps time; never usleep inside the core */
}

static void quiet_logger(avr_t *avr, const int level, const char *format, va_list ap)
{
    (void)avr;
    if (level <= LOG_WARNING) {        /* simavr's chatter stays off stdout, which carries the events */
        fprintf(stderr, "simavr: ");
        vfprintf(stderr, format, ap);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: avrsim [--board ramps|header|stock] [--steps N|U=N,...] [--reversed AXES] "
                    "[--dir-positive high|low] [--speed X] [--reset-on-open] [--boot-on-open] [--trace FILE] "
                    "[--link PATH] [--jam-deg DEG] FIRMWARE.elf\n");
    exit(2);
}

static struct options parse_options(int argc, char **argv)
{
    struct options o = {.board = "ramps", .steps = "200", .reversed = "", .dir_positive = "high", .speed = 1.0,
                         .jam_deg = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--board") && more) o.board = argv[++i];
        else if (!strcmp(a, "--steps") && more) o.steps = argv[++i];
        else if (!strcmp(a, "--reversed") && more) o.reversed = argv[++i];
        else if (!strcmp(a, "--dir-positive") && more) o.dir_positive = argv[++i];
        else if (!strcmp(a, "--speed") && more) o.speed = atof(argv[++i]);
        else if (!strcmp(a, "--jam-deg") && more) o.jam_deg = atof(argv[++i]);
        else if (!strcmp(a, "--trace") && more) o.trace = argv[++i];
        else if (!strcmp(a, "--link") && more) o.link = argv[++i];
        else if (!strcmp(a, "--reset-on-open")) o.reset_on_open = 1;
        else if (!strcmp(a, "--boot-on-open")) o.boot_on_open = 1;
        else if (a[0] != '-' && !o.elf) o.elf = a;
        else usage();
    }
    if (!o.elf || o.speed < 0)
        usage();
    return o;
}

static int face_index(const struct axis_pins *pins, char face)
{
    for (int i = 0; i < AXES; i++)
        if (pins[i].name[0] == face)
            return i;
    fprintf(stderr, "avrsim: no axis %c on this board (axes:", face);
    for (int i = 0; i < AXES; i++)
        fprintf(stderr, " %s", pins[i].name);
    fprintf(stderr, ")\n");
    exit(2);
}

static void axes_from_options(struct axes_config *c, const struct options *o)
{
    static const struct { const char *name; const struct axis_pins *pins; } boards[] = {
        {"ramps", ramps_pins}, {"header", header_pins}, {"stock", stock_pins}};
    c->pins = NULL;
    for (size_t i = 0; i < sizeof boards / sizeof boards[0]; i++)
        if (!strcmp(o->board, boards[i].name))
            c->pins = boards[i].pins;
    if (!c->pins) {
        fprintf(stderr, "avrsim: --board must be ramps, header or stock\n");
        exit(2);
    }
    if (strcmp(o->dir_positive, "high") && strcmp(o->dir_positive, "low")) {
        fprintf(stderr, "avrsim: --dir-positive must be high or low\n");
        exit(2);
    }
    long all = strchr(o->steps, '=') ? 200 : atol(o->steps);
    for (int i = 0; i < AXES; i++)
        c->steps_per_quarter[i] = (int32_t)all;
    for (const char *p = strchr(o->steps, '='); p; p = strchr(p + 1, '='))
        c->steps_per_quarter[face_index(c->pins, p[-1])] = (int32_t)atol(p + 1);
    for (int i = 0; i < AXES; i++)
        if (c->steps_per_quarter[i] <= 0) {
            fprintf(stderr, "avrsim: --steps must be positive\n");
            exit(2);
        }
    for (int i = 0; i < AXES; i++)
        c->reversed[i] = !strcmp(o->dir_positive, "low");
    for (const char *f = o->reversed; *f; f++)
        if (*f != ',')
            c->reversed[face_index(c->pins, *f)] ^= 1;
    c->jam_deg = o->jam_deg;
    c->trace = NULL;
    if (o->trace && !(c->trace = fopen(o->trace, "w"))) {
        perror("avrsim: --trace");
        exit(2);
    }
}

static avr_t *load(const char *path)
{
    elf_firmware_t fw;
    avr_global_logger_set(quiet_logger);
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(path, &fw) != 0) {
        fprintf(stderr, "avrsim: cannot read %s\n", path);
        exit(2);
    }
    avr_t *avr = avr_make_mcu_by_name("atmega2560");
    if (!avr) {
        fprintf(stderr, "avrsim: simavr has no atmega2560 core\n");
        exit(2);
    }
    avr_init(avr);
    avr_load_firmware(avr, &fw);
    avr->frequency = 16000000;
    avr->sleep = no_sleep;
    avr->log = 0;
    return avr;
}

struct harness {
    avr_t *avr;
    struct options opt;
    double t0;
    avr_cycle_count_t cycle0;
    int hung, held, was_attached, quit;     /* held: in reset until a host opens the port (--boot-on-open) */
    char line[256];
    size_t line_len;
};

static void event(struct harness *h, const char *what)
{
    printf("%s %llu\n", what, (unsigned long long)h->avr->cycle);
    fflush(stdout);
}

/* avr_reset() clears the PIN registers but leaves each pin IRQ's last value, and a pin IRQ only notifies on a
 * change: an input the firmware pulls up again after the reset would then read low (grbl's limit and probe
 * inputs all "triggered"). Let the next write to each pin go through, as at power-up. */
static void refresh_pins(avr_t *avr)
{
    for (char port = 'A'; port <= 'L'; port++)
        for (int bit = 0; bit < 8; bit++) {
            avr_irq_t *irq = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), IOPORT_IRQ_PIN0 + bit);
            if (irq)
                irq->flags |= IRQ_FLAG_INIT;
        }
}

static void reset(struct harness *h, const char *why)
{
    avr_reset(h->avr);
    refresh_pins(h->avr);
    h->avr->data[MCUSR_ADDR] |= EXTRF_BIT;  /* as the reset pin leaves it: Marlin prints "External Reset" */
    bridge_reset_input();
    h->hung = 0;
    printf("RESET %llu %s\n", (unsigned long long)h->avr->cycle, why);
    fflush(stdout);
}

static void command(struct harness *h, const char *cmd)
{
    if (!strcmp(cmd, "SYNC")) {
        printf("SYNC %llu %.6f", (unsigned long long)h->avr->cycle, wall() - h->t0);
        axes_report(stdout);
        printf("\n");
        fflush(stdout);
    } else if (!strcmp(cmd, "RESET")) {
        reset(h, "command");
    } else if (!strcmp(cmd, "HANG")) {
        h->hung = 1;
        event(h, "HUNG");
    } else if (!strcmp(cmd, "UNPLUG")) {
        bridge_unplug();
        event(h, "UNPLUGGED");
    } else if (!strcmp(cmd, "QUIT")) {
        h->quit = 1;
    } else if (cmd[0]) {
        fprintf(stderr, "avrsim: unknown command %s\n", cmd);
    }
}

static void read_commands(struct harness *h)
{
    char c;
    ssize_t n;
    while ((n = read(0, &c, 1)) == 1) {
        if (c == '\n') {
            h->line[h->line_len] = 0;
            command(h, h->line);
            h->line_len = 0;
        } else if (h->line_len + 1 < sizeof h->line) {
            h->line[h->line_len++] = c;
        }
    }
    if (n == 0)
        h->quit = 1;               /* the parent is gone */
}

static void run_slice(struct harness *h)
{
    avr_cycle_count_t end = h->avr->cycle + SLICE_CYCLES;
    while (h->avr->cycle < end) {
        int state = avr_run(h->avr);
        if (state == cpu_Done || state == cpu_Crashed) {
            event(h, state == cpu_Done ? "STOPPED done" : "STOPPED crashed");
            h->hung = 1;
            return;
        }
    }
}

/* Sleep until the wall clock catches up with simulated time, waking early for host bytes or a command. */
static void keep_time(struct harness *h)
{
    double sim_s = (double)(h->avr->cycle - h->cycle0) / h->avr->frequency;
    double ahead = h->opt.speed > 0 ? h->t0 + sim_s / h->opt.speed - wall() : 0;
    if (ahead < -0.02)                 /* fell behind (a busy machine): go on from now, never burst */
        h->t0 -= ahead + 0.02;
    if (ahead <= 0 && !h->hung && !h->held)
        return;
    struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = bridge_fd(), .events = POLLIN}};
    int nfds = (bridge_attached() && bridge_fd() >= 0) ? 2 : 1;
    double wait = (h->hung || h->held) ? 0.002 : ahead;
    struct timespec ts = {.tv_sec = (time_t)wait, .tv_nsec = (long)((wait - (time_t)wait) * 1e9)};
    ppoll(fds, nfds, &ts, NULL);
}

int main(int argc, char **argv)
{
    struct harness h = {.opt = parse_options(argc, argv)};
    struct axes_config axes;
    memset(&axes, 0, sizeof axes);
    axes_from_options(&axes, &h.opt);
    h.avr = load(h.opt.elf);
    axes_attach(h.avr, &axes, stdout);
    bridge_open(h.avr, h.opt.link, stdout, axes.trace);
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    h.t0 = wall();
    h.cycle0 = h.avr->cycle;
    h.held = h.opt.boot_on_open;
    while (!h.quit) {
        if (!h.hung && !h.held)
            run_slice(&h);
        bridge_service(h.avr);
        if (h.held && bridge_attached()) {  /* power on: simulated time starts now */
            h.held = 0;
            h.t0 = wall();
            h.was_attached = 1;        /* this open powered it on: no --reset-on-open reset as well */
            event(&h, "BOOT");
        }
        if (bridge_attached() && !h.was_attached && h.opt.reset_on_open)
            reset(&h, "port opened");
        h.was_attached = bridge_attached();
        read_commands(&h);
        keep_time(&h);
    }
    printf("STATS cycles=%llu wall_s=%.3f edges=%llu\n", (unsigned long long)(h.avr->cycle - h.cycle0),
           wall() - h.t0, (unsigned long long)axes_edge_count());
    if (axes.trace)
        fclose(axes.trace);
    if (h.opt.link)
        unlink(h.opt.link);
    return 0;
}
