/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The RoCEv2 invariant CRC (icrc.c).  The value is stored after the pad in
 * little-endian byte order: the CRC-32 register's low byte goes first on
 * the wire, as in the Ethernet FCS.  The functions return it as __le32,
 * ready to store.
 */
#ifndef SROCE_ICRC_H
#define SROCE_ICRC_H

#include <linux/types.h>

struct sk_buff;

extern bool sroce_loopback_icrc;

int sroce_icrc_buf(const void *iphdr, unsigned int len, __le32 *icrc);
int sroce_icrc_skb(struct sk_buff *skb, int nhoff, unsigned int len,
		   __le32 *icrc);
void sroce_icrc_rxe_flush(__le32 *icrc, const void *bth, unsigned int len);

#endif /* SROCE_ICRC_H */
