/* The boot id differs from the previous boot's because the counter moves on every reset
 * (an erased EEPROM reads 0xFFFFFFFF, so the first boot is 00000000). */
#include <avr/eeprom.h>
#include "boot_id.h"

static uint32_t EEMEM stored;
static uint32_t current;

uint32_t boot_id_next(void)
{
    current = eeprom_read_dword(&stored) + 1;
    eeprom_update_dword(&stored, current);
    return current;
}

uint32_t boot_id(void) { return current; }
