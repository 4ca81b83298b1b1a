// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce: the RoCEv2 Invariant CRC.
 *
 * The ICRC is the Ethernet CRC-32 over the packet from the IP header to
 * the end of the pad, as if it were an InfiniBand packet: a masked LRH
 * (8 bytes of 0xff) first, and every field a router may change set to
 * all ones:
 *
 *   IPv4: TOS (DSCP/ECN), TTL, header checksum
 *   IPv6: traffic class, flow label, hop limit
 *   UDP:  checksum
 *   BTH:  the byte before the destination QP (FECN, BECN, resv6a)
 *
 * The register starts at ~0, is complemented at the end and goes on the
 * wire low byte first (the __le32 this file returns), which is what
 * rdma_rxe on x86 and RoCE hardware send.  The whole IPv4 header is
 * covered, options included; UDP must follow the IP header directly.
 */
#include <linux/errno.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <linux/udp.h>
#include <kunit/visibility.h>

#include "crc.h"
#include "icrc.h"
#include "wire.h"

/*
 * A packet from one of the device's GIDs to another never reaches a
 * netdev (udp.c, sroce_udp_loopback()): nothing on its way can corrupt it and
 * nobody else sees it, so it goes without an ICRC, which would cost two
 * passes over every byte (the largest cost of single-device loopback,
 * the topology blktests, NVMe-oF and NFS/RDMA CI use).  Everything that
 * reaches a netdev has one.  loopback_icrc=1 puts it back, to exercise
 * the CRC on loopback.
 */
bool sroce_loopback_icrc;
module_param_named(loopback_icrc, sroce_loopback_icrc, bool, 0444);
MODULE_PARM_DESC(loopback_icrc,
		 "Compute and check the ICRC on packets that never leave the host's sroce devices (default: no)");

/* crc32_le(~0, 8 bytes of 0xff): the register after the masked LRH */
#define SROCE_ICRC_SEED		0xdebb20e3

/* Enough for IPv4 with options, or IPv6, plus UDP and BTH */
#define SROCE_ICRC_HDR_MAX	(60 + sizeof(struct udphdr) + SROCE_BTH_LEN)

#define SROCE_ICRC_MASK16	((__force __sum16)0xffff)

/*
 * Mask the variant fields in @hdr, a copy of the first @n bytes of the
 * packet (all of it, or SROCE_ICRC_HDR_MAX bytes if it is longer).
 */
static int sroce_icrc_mask(u8 *hdr, unsigned int n)
{
	struct sroce_bth *bth;
	struct udphdr *udph;
	unsigned int iphlen;

	if (!n)
		return -EINVAL;
	switch (hdr[0] >> 4) {
	case 4: {
		struct iphdr *iph = (struct iphdr *)hdr;

		iphlen = (hdr[0] & 0xf) * 4;
		if (iphlen < sizeof(*iph) || n < iphlen ||
		    iph->protocol != IPPROTO_UDP)
			return -EINVAL;
		iph->tos = 0xff;
		iph->ttl = 0xff;
		iph->check = SROCE_ICRC_MASK16;
		break;
	}
	case 6: {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)hdr;

		iphlen = sizeof(*ip6h);
		if (n < iphlen || ip6h->nexthdr != IPPROTO_UDP)
			return -EINVAL;
		ip6h->priority = 0xf;
		memset(ip6h->flow_lbl, 0xff, sizeof(ip6h->flow_lbl));
		ip6h->hop_limit = 0xff;
		break;
	}
	default:
		return -EINVAL;
	}

	if (n < iphlen + sizeof(*udph) + SROCE_BTH_LEN)
		return -EINVAL;
	udph = (struct udphdr *)(hdr + iphlen);
	udph->check = SROCE_ICRC_MASK16;
	bth = (struct sroce_bth *)(udph + 1);
	bth->qpn |= cpu_to_be32(SROCE_BTH_RESV8A);
	return 0;
}

/**
 * sroce_icrc_buf() - compute the ICRC of a packet in a linear buffer
 * @iphdr: the IP header (IPv4 or IPv6, from its version nibble)
 * @len: bytes from @iphdr to the end of the pad, excluding the ICRC
 * @icrc: the ICRC, in wire byte order
 *
 * Return: 0, or -EINVAL if the packet is not IP/UDP or is shorter than
 * its IP, UDP and BT headers.
 */
int sroce_icrc_buf(const void *iphdr, unsigned int len, __le32 *icrc)
{
	u8 hdr[SROCE_ICRC_HDR_MAX] __aligned(4);
	unsigned int n = min_t(unsigned int, len, sizeof(hdr));
	u32 crc;
	int err;

	memcpy(hdr, iphdr, n);
	err = sroce_icrc_mask(hdr, n);
	if (err)
		return err;
	crc = sroce_crc32(SROCE_ICRC_SEED, hdr, n);
	crc = sroce_crc32(crc, (const u8 *)iphdr + n, len - n);
	*icrc = cpu_to_le32(~crc);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_buf);

/*
 * Copy @len bytes at @off from the data of @skb; @off may be negative,
 * for headers already pulled (they are in the linear head).
 */
static void sroce_icrc_copy(const struct sk_buff *skb, int off, u8 *to,
			    unsigned int len)
{
	unsigned int n;

	if (off < 0) {
		n = min_t(unsigned int, len, -off);
		memcpy(to, skb->data + off, n);
		off += n;
		to += n;
		len -= n;
	}
	if (len)
		WARN_ON_ONCE(skb_copy_bits(skb, off, to, len));
}

/* Continue @crc over @len bytes at @off (may be negative) of @skb */
static u32 sroce_icrc_update(u32 crc, struct sk_buff *skb, int off,
			     unsigned int len)
{
	struct skb_seq_state st;
	unsigned int n, pos;
	const u8 *data;

	if (off < 0) {
		n = min_t(unsigned int, len, -off);
		crc = sroce_crc32(crc, skb->data + off, n);
		off += n;
		len -= n;
	}
	if (!len)
		return crc;

	skb_prepare_seq_read(skb, off, off + len, &st);
	for (pos = 0; pos < len; pos += n) {
		/* a block may run past the end we asked for */
		n = skb_seq_read(pos, &data, &st);
		if (WARN_ON_ONCE(!n))
			break;
		n = min(n, len - pos);
		crc = sroce_crc32(crc, data, n);
	}
	skb_abort_seq_read(&st);
	return crc;
}

/**
 * sroce_icrc_skb() - compute the ICRC of a packet in an skb
 * @skb: the packet; may be nonlinear (frags, frag_list)
 * @nhoff: offset of the IP header from @skb->data, e.g.
 *	   skb_network_offset(); negative if the headers were pulled
 * @len: bytes from the IP header to the end of the pad, excluding the ICRC
 * @icrc: the ICRC, in wire byte order
 *
 * Reads nothing outside [@nhoff, @nhoff + @len).  Compare the result with
 * the 4 bytes that follow, or store it there.
 *
 * Return: 0, or -EINVAL if the range is not within @skb, or the packet is
 * not IP/UDP or is shorter than its IP, UDP and BT headers.
 */
int sroce_icrc_skb(struct sk_buff *skb, int nhoff, unsigned int len,
		   __le32 *icrc)
{
	u8 hdr[SROCE_ICRC_HDR_MAX] __aligned(4);
	unsigned int n = min_t(unsigned int, len, sizeof(hdr));
	u32 crc;
	int err;

	if (nhoff < -(int)skb_headroom(skb) ||
	    (s64)nhoff + len > (s64)skb->len)
		return -EINVAL;

	sroce_icrc_copy(skb, nhoff, hdr, n);
	err = sroce_icrc_mask(hdr, n);
	if (err)
		return err;
	crc = sroce_crc32(SROCE_ICRC_SEED, hdr, n);
	crc = sroce_icrc_update(crc, skb, nhoff + n, len - n);
	*icrc = cpu_to_le32(~crc);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_skb);

/**
 * sroce_icrc_rxe_flush() - turn a FLUSH's ICRC into the one rdma_rxe uses
 * @icrc: the ICRC by the rules, of a FLUSH with no payload; updated
 * @bth: the packet from its BTH to the end of its pad
 * @len: bytes at @bth
 *
 * rdma_rxe's opcode table gives RC FLUSH no payload offset (rxe_opcode.c,
 * IB_OPCODE_RC_FLUSH: no [RXE_PAYLOAD]; Linux 6.2 to at least 6.12), so
 * it takes the whole packet from the BTH for the payload: the ICRC it
 * sends and the one it wants go on, after the headers, over the BTH,
 * FETH and RETH a second time, unmasked.  A FLUSH with the ICRC the IBTA
 * defines is dropped as corrupt and never answered.
 */
void sroce_icrc_rxe_flush(__le32 *icrc, const void *bth, unsigned int len)
{
	u32 crc = ~le32_to_cpu(*icrc);

	*icrc = cpu_to_le32(~sroce_crc32(crc, bth, len));
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_rxe_flush);
