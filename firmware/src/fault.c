/* The latched fault: first one wins until CLEAR. */
#include "fault.h"
#include "command.h"
#include "motion.h"
#include "out.h"

static const char names[] PROGMEM =
    "NONE\0CRC\0FRAME\0LONG\0SEQ\0NOSESSION\0BADCMD\0BADARG\0QFULL\0"
    "FAULTED\0STALL\0LIMIT\0DISABLED\0DRIVER\0ESTOP\0HOSTLOST";

static uint8_t latched;
static uint16_t latched_mid;
static int32_t latched_seq;

void out_code(uint8_t code)
{
    PGM_P p = names;
    while (code--)
        while (pgm_read_byte(p++))
            ;
    out_pstr(p);
}

static void send_fault(uint8_t code, uint16_t mid, int32_t seq, uint8_t motor)
{
    out_begin();
    out_pstr(PSTR("FAULT "));
    out_code(code);
    out_key_uint(PSTR("done"), motion_done());
    if (mid)
        out_key_uint(PSTR("mid"), mid);
    if (seq != NO_SEQ)
        out_key_uint(PSTR("seq"), (uint16_t)seq);
    if (motor != NO_MOTOR) {
        out_pstr(PSTR(" motor="));
        out_char(motor_names[motor]);
    }
    out_end();
}

void fault_latch(uint8_t code, uint16_t mid, int32_t seq, uint8_t motor)
{
    uint8_t stopped = motion_stop();
    uint8_t fresh = latched == C_NONE;
    if (fresh) {
        latched = code;
        latched_mid = mid;
        latched_seq = seq;
    }
    if (fresh || stopped)
        send_fault(code, mid, seq, motor);
}

uint8_t fault_code(void) { return latched; }

void fault_clear(void) { latched = C_NONE; }

void out_fault_fields(void)
{
    out_pstr(PSTR(" fault="));
    out_code(latched);
    if (latched != C_NONE && latched_mid)
        out_key_uint(PSTR("fmid"), latched_mid);
    if (latched != C_NONE && latched_seq != NO_SEQ)
        out_key_uint(PSTR("fseq"), (uint16_t)latched_seq);
}
