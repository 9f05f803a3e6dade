#ifndef ROBOTD_CRC16_H
#define ROBOTD_CRC16_H
#include <stdint.h>

/* CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final xor. */
uint16_t crc16_update(uint16_t crc, uint8_t byte);
uint16_t crc16(const char *data, uint8_t len);
#endif
