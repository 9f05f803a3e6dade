/* Host-compiled unit tests of the pure parts: make -C firmware check */
#include <stdio.h>
#include <string.h>
#include "command.h"
#include "config.h"
#include "crc16.h"
#include "frame.h"
#include "profile.h"
#include "queue.h"

static int failures;
#define CHECK(cond) do { if (!(cond)) { failures++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

static enum frame_result check_line(const char *text, char *body_out)
{
    struct line l;
    uint8_t n = 0, ended = 0;
    enum frame_result r = FRAME_IGNORE;
    memset(&l, 0, sizeof l);
    for (const char *p = text; *p; p++)
        if (line_feed(&l, *p)) {
            r = line_check(&l, &n);
            ended = 1;
            if (r == FRAME_OK && body_out)
                strcpy(body_out, l.buf);
        }
    return ended ? r : FRAME_IGNORE;
}

static void test_crc(void)
{
    CHECK(crc16("123456789", 9) == 0x29B1);
    CHECK(crc16("STATUS 1", 8) == 0x448E);
    CHECK(crc16("ACK 4711", 8) == 0x92AE);
}

static void test_frames(void)
{
    char body[FRAME_MAX];
    char long_line[280];
    CHECK(check_line("STATUS 1*448E\n", body) == FRAME_OK && !strcmp(body, "STATUS 1"));
    CHECK(check_line("STATUS 1*448e\r\n", body) == FRAME_OK);
    CHECK(check_line("STATUS 1*448F\n", 0) == FRAME_BADCRC);
    CHECK(check_line("STATUS 1\n", 0) == FRAME_BAD);
    CHECK(check_line("STATUS 1*448\n", 0) == FRAME_BAD);
    CHECK(check_line("STATUS 1*44G8\n", 0) == FRAME_BAD);
    CHECK(check_line("STATUS  1*448E\n", 0) == FRAME_BAD);
    CHECK(check_line(" STATUS 1*448E\n", 0) == FRAME_BAD);
    CHECK(check_line("STA*TUS 1*448E\n", 0) == FRAME_BAD);
    CHECK(check_line("STATUS\t1*448E\n", 0) == FRAME_BAD);
    CHECK(check_line("\n", 0) == FRAME_IGNORE);
    CHECK(check_line("# hello\n", 0) == FRAME_IGNORE);
    memset(long_line, 'X', 199);
    strcpy(long_line + 199, "\n");
    CHECK(check_line(long_line, 0) == FRAME_BAD);        /* 200 bytes with LF: not LONG */
    memset(long_line, 'X', 200);
    strcpy(long_line + 200, "\n");
    CHECK(check_line(long_line, 0) == FRAME_LONG);
    memset(long_line, 'X', 250);
    strcpy(long_line + 250, "\nSTATUS 1*448E\n");
    CHECK(check_line(long_line, 0) == FRAME_OK);         /* the next line is fine */
}

static void test_seq(void)
{
    uint16_t expected = 65535, next = 0, old = 65534, same = 65535;
    CHECK((uint16_t)(next - expected) == 1);             /* ahead by one across the wrap */
    CHECK((uint16_t)(old - expected) >= 32768);          /* behind: a duplicate */
    CHECK((uint16_t)(same - expected) == 0);
}

static enum cmd_result queue_cmd(const char *text, uint8_t proto)
{
    static char buf[FRAME_MAX];
    char *argv[100];
    uint8_t argc = 0;
    PGM_P why;
    strcpy(buf, text);
    argv[argc++] = strtok(buf, " ");
    while ((argv[argc] = strtok(0, " ")))
        argc++;
    return command_queue(argc, argv, proto, queue_count(), &why);
}

static void test_commands(void)
{
    queue_clear();
    CHECK(queue_cmd("TURN 1 U 1", 1) == CMD_OK);
    CHECK(queue_cmd("TURN 1 X 1", 1) == CMD_BADARG);
    CHECK(queue_cmd("TURN 1 U 3", 1) == CMD_BADARG);
    CHECK(queue_cmd("TURN 0 U 1", 1) == CMD_BADARG);
    CHECK(queue_cmd("PAIR 2 U 1 D -1", 1) == CMD_OK);
    CHECK(queue_cmd("PAIR 2 U 1 R -1", 1) == CMD_BADARG);
    CHECK(queue_cmd("HOME 3", 1) == CMD_OK);
    CHECK(queue_cmd("ENABLE 3 U U", 1) == CMD_BADARG);
    CHECK(queue_cmd("SPEED 4 19", 1) == CMD_BADARG);
    CHECK(queue_cmd("SPEED 4 20", 1) == CMD_OK);
    CHECK(queue_cmd("FOO 4", 1) == CMD_BADCMD);
    CHECK(queue_cmd("JOG 5 U 10", 1) == CMD_BADCMD);     /* a version-1 session */
    CHECK(queue_cmd("JOG 5 U 10 R -10", 2) == CMD_OK);
    CHECK(queue_cmd("JOG 5 U 0", 2) == CMD_BADARG);
    CHECK(queue_cmd("JOG 5 U 1 U 2", 2) == CMD_BADARG);
    CHECK(queue_cmd("MOTOR 6 U steps=400 rate=8000 accel=2000 dir=1", 2) == CMD_OK);
    CHECK(queue_cmd("MOTOR 6 U dir=-1 accel=1 rate=1 steps=1", 2) == CMD_OK);
    CHECK(queue_cmd("MOTOR 6 U steps=400 rate=8000 accel=2000", 2) == CMD_BADARG);
    CHECK(queue_cmd("MOTOR 6 U steps=400 steps=400 accel=2000 dir=1", 2) == CMD_BADARG);
    CHECK(queue_cmd("MOTOR 6 U steps=400 rate=30000 accel=2000 dir=1", 2) == CMD_BADARG);
    CHECK(queue_cmd("MOTOR 6 U steps=400 rate=8000 accel=2000 dir=0", 2) == CMD_BADARG);
    uint8_t before = queue_count();
    CHECK(queue_cmd("PLAN 65534 R1 U2 F-1 U1D-1 B-2", 2) == CMD_OK);
    CHECK(queue_count() == before + 5);
    CHECK(queue_cmd("PLAN 7 R1 U1R1", 2) == CMD_BADARG);
    CHECK(queue_cmd("PLAN 7 R1 X1", 2) == CMD_BADARG);
    CHECK(queue_cmd("PLAN 7 R3", 2) == CMD_BADARG);
    CHECK(queue_count() == before + 5);                  /* all or nothing */
    while (queue_count() < QUEUE_CAP - 2)
        CHECK(queue_cmd("TURN 1 U 1", 1) == CMD_OK);
    CHECK(queue_cmd("PLAN 7 R1 U1 F1", 2) == CMD_QFULL);
    CHECK(queue_cmd("PLAN 7 R1 U1", 2) == CMD_OK);
    CHECK(queue_cmd("TURN 1 U 1", 1) == CMD_QFULL);
    const struct step *s;
    queue_clear();
    queue_cmd("PLAN 65535 U1D-1 F2", 2);
    s = queue_pop();
    CHECK(s->verb == V_PAIR && s->mid == 65535 && s->u.turn.q[1] == -1);
    s = queue_pop();
    CHECK(s->verb == V_TURN && s->mid == 1 && s->u.turn.q[0] == 2);
}

/* Run the interrupt's ramp logic for n steps; returns seconds from start to the last step. */
static double simulate(uint16_t n, float v, uint16_t accel)
{
    struct axis a;
    uint32_t tick = 0, last = 0, steps = 0;
    profile_load(&a, n, v, accel);
    while (a.remaining && tick < 100000000UL) {
        if (axis_tick(&a)) {
            steps++;
            last = tick;
        }
        if (tick % 6 == 0)
            axis_update(&a);
        tick++;
    }
    CHECK(steps == n);
    return (double)last / TICK_HZ;
}

/* Start to last step is a little shorter than the ideal move, which ends at standstill. */
static void near(double got, double want, double low, const char *what)
{
    int ok = got > want * low && got < want * 1.05;
    printf("%-34s %.4f s (ideal %.4f s)%s\n", what, got, want, ok ? "" : "  <-- off");
    CHECK(ok);
}

static void test_profile(void)
{
    CHECK((int)profile_cruise(200, 4000, 400, 0) == 4000);
    float v = profile_cruise(200, 4000, 400, 150);       /* A=40000 T=0.15 S=200: root 2000 */
    CHECK(v > 1999 && v < 2001);
    CHECK((int)profile_cruise(200, 4000, 400, 20) == 4000); /* impossible speed: top rate */
    near(simulate(400, 2000, 400), 400 / 2000.0 + 2000 / 40000.0, 0.9, "trapezoid 400 steps at 2000/s");
    near(simulate(200, 4000, 400), 2 * 0.0707107, 0.9, "triangle 200 steps");
    near(simulate(4000, 20000, 2000), 4000 / 20000.0 + 20000 / 200000.0, 0.9, "trapezoid 4000 steps at 20000/s");
    near(simulate(40000, 20000, 65535), 2.0 + 20000 / 6553500.0, 0.9, "40000 steps, top acceleration");
    near(simulate(3, 4000, 1), 2 * 0.173205, 0.6, "3 steps, lowest acceleration");
}

int main(void)
{
    test_crc();
    test_frames();
    test_seq();
    test_commands();
    test_profile();
    printf(failures ? "%d FAILED\n" : "all unit tests passed\n", failures);
    return failures != 0;
}
