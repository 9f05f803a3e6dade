/* UART0 <-> a pseudo-terminal. Bytes from the host are handed to the UART
 * only while its receive FIFO has room (XON/XOFF from simavr), and the UART
 * paces them at the baud rate. Bytes the firmware sends are written to the
 * pty; while no host has the port open they are dropped, as a USB serial
 * bridge drops them, so the simulation never stalls on a reader. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <simavr/avr_uart.h>
#include <simavr/sim_io.h>
#include "harness.h"

#define BUF 8192

static int master = -1;
static int attached;
static int xon = 1;
static uint8_t in_buf[BUF], out_buf[BUF];
static size_t in_len, out_len;
static avr_irq_t *uart_input;
static avr_t *core;
static FILE *trace;
static avr_cycle_count_t rx_busy_until;    /* when the UART has shifted in the last byte handed to it */

static void on_output(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq; (void)param;
    if (trace && value == '\n')
        fprintf(trace, "T %llu\n", (unsigned long long)core->cycle);
    if (attached && out_len < BUF)
        out_buf[out_len++] = (uint8_t)value;
}

static void on_xon(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq; (void)value; (void)param;
    xon = 1;
}

static void on_xoff(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq; (void)value; (void)param;
    xon = 0;
}

/* Cycles one byte takes on the wire at the baud rate the firmware set (10 bits, U2X honoured). */
static avr_cycle_count_t byte_cycles(void)
{
    unsigned ubrr = core->data[0xC4] | (core->data[0xC5] & 0x0F) << 8;
    unsigned divisor = (core->data[0xC0] & 0x02) ? 8 : 16;
    return 10ULL * divisor * (ubrr + 1);
}

/* simavr 1.6 times a byte as 11 bits and ignores U2X, so 115200 baud with U2X runs at 53,500: set the
 * silicon's byte time on UART0 (found by its name among the cores' I/O modules) every time we look. */
static avr_uart_t *uart0;

static void find_uart0(avr_t *avr)
{
    for (avr_io_t *io = avr->io_port; io; io = io->next)
        if (!strcmp(io->kind, "uart") && ((avr_uart_t *)io)->name == '0')
            uart0 = (avr_uart_t *)io;
}

static void fix_byte_time(void)
{
    if (uart0)
        uart0->cycles_per_byte = byte_cycles();
}

static void uart_fast_polling(avr_t *avr)
{
    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(AVR_UART_FLAG_POLL_SLEEP | AVR_UART_FLAG_STDIO);
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
}

int bridge_open(avr_t *avr, const char *link_path, FILE *events, FILE *trace_file)
{
    core = avr;
    trace = trace_file;
    int slave;
    char name[128];
    if (openpty(&master, &slave, name, NULL, NULL) < 0) {
        perror("avrsim: openpty");
        exit(2);
    }
    struct termios raw;
    tcgetattr(slave, &raw);
    cfmakeraw(&raw);
    tcsetattr(slave, TCSANOW, &raw);
    close(slave);                    /* from now on the master sees a hang-up while nobody has it open */
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    if (link_path) {
        unlink(link_path);
        if (symlink(name, link_path) < 0)
            perror("avrsim: symlink");
    }
    uart_fast_polling(avr);
    find_uart0(avr);
    uart_input = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), on_output, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), on_xon, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), on_xoff, NULL);
    fprintf(events, "PTY %s\n", name);
    fflush(events);
    return master;
}

static void read_host(void)
{
    while (in_len < BUF) {
        ssize_t n = read(master, in_buf + in_len, BUF - in_len);
        if (n <= 0)
            return;
        in_len += (size_t)n;
    }
}

static void note_received(uint8_t byte)
{
    avr_cycle_count_t start = rx_busy_until > core->cycle ? rx_busy_until : core->cycle;
    rx_busy_until = start + byte_cycles();
    if (trace && byte == '\n')
        fprintf(trace, "R %llu\n", (unsigned long long)rx_busy_until);
}

static void feed_uart(void)
{
    size_t fed = 0;
    while (xon && fed < in_len) {
        note_received(in_buf[fed]);
        avr_raise_irq(uart_input, in_buf[fed++]);
    }
    memmove(in_buf, in_buf + fed, in_len - fed);
    in_len -= fed;
}

static void write_host(void)
{
    if (!attached) {
        out_len = 0;
        return;
    }
    ssize_t n = write(master, out_buf, out_len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n < 0) {
        out_len = 0;
        return;
    }
    memmove(out_buf, out_buf + n, out_len - (size_t)n);
    out_len -= (size_t)n;
}

void bridge_service(avr_t *avr)
{
    (void)avr;
    if (master < 0)
        return;
    fix_byte_time();
    struct pollfd p = {.fd = master, .events = POLLIN};
    poll(&p, 1, 0);
    attached = !(p.revents & POLLHUP);
    if (attached && (p.revents & POLLIN))
        read_host();
    feed_uart();
    if (out_len)
        write_host();
}

int bridge_attached(void)
{
    return attached;
}

int bridge_fd(void)
{
    return master;
}

void bridge_reset_input(void)
{
    in_len = 0;
    xon = 1;
}

void bridge_unplug(void)
{
    if (master >= 0)
        close(master);
    master = -1;
    attached = 0;
}
