/* Boot id: a 32-bit counter in EEPROM, incremented at every reset. */
#ifndef ROBOTD_BOOT_ID_H
#define ROBOTD_BOOT_ID_H
#include <stdint.h>
uint32_t boot_id_next(void);        /* call once at boot */
uint32_t boot_id(void);
#endif
