/* CRC-16/CCITT-FALSE of frame bodies (check value 0x29B1 for "123456789"). */
#include "crc16.h"

uint16_t crc16_update(uint16_t crc, uint8_t byte)
{
    crc ^= (uint16_t)byte << 8;
    for (uint8_t bit = 0; bit < 8; bit++)
        crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    return crc;
}

uint16_t crc16(const char *data, uint8_t len)
{
    uint16_t crc = 0xFFFF;
    while (len--)
        crc = crc16_update(crc, (uint8_t)*data++);
    return crc;
}
