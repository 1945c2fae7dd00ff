/*
 * appr_device.h - device tokens: what a browser (or API client) that
 * signed in as an approver keeps, so that its later sign-ins are not held
 * back by failures someone else caused for that approver id.
 *
 * A token is "igd_" + base64url(expiry (8 bytes, big-endian seconds) ||
 * nonce (16 random bytes) || HMAC-SHA256(key, "intentgate-device-v1" ||
 * 0x00 || expiry || nonce || approver id)). It names no secret and
 * grants nothing by itself: the password is still checked. It only says
 * "this client signed in as this approver before", and its nonce keys
 * the device's own failure count. Tokens of another key, another
 * approver, or past their expiry are not devices.
 *
 * Pure functions (the nonce comes from libsodium's randombytes); thread
 * safe.
 */
#ifndef APPR_DEVICE_H
#define APPR_DEVICE_H

#include <stdint.h>

#define APPR_DEVICE_KEY_BYTES 32
#define APPR_DEVICE_LEN 79    /* "igd_" + 75 */
#define APPR_DEVICE_ID_LEN 32 /* the nonce in hex */

/* A new device token for approver, valid until now + ttl. */
void appr_device_issue(const unsigned char key[APPR_DEVICE_KEY_BYTES],
                       const char *approver, int64_t now, int64_t ttl,
                       char out[APPR_DEVICE_LEN + 1]);

/* 1 when token (NULL is fine) is a device token issued with key for
   approver and still valid at now; id then gets the device's id (hex).
   Constant time in the MAC comparison. */
int appr_device_check(const unsigned char key[APPR_DEVICE_KEY_BYTES],
                      const char *token, const char *approver, int64_t now,
                      char id[APPR_DEVICE_ID_LEN + 1]);

#endif
