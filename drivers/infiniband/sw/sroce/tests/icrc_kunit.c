// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the sroce ICRC (icrc.c): sroce_icrc_buf(),
 * sroce_icrc_skb() and sroce_icrc_rxe_flush().
 *
 * What it proves:
 *  - the known-good vectors of tests/icrc_vectors.h, among them a CNP
 *    whose ICRC a ConnectX-4 Lx computed, come out bit-exact, in wire
 *    byte order, from a linear buffer and from skbs: linear, with the
 *    headers already pulled (negative offset), split into page frags at
 *    every byte, and with a frag_list;
 *  - a reference implementation written from the IBTA definition (CRC-32
 *    over 8 bytes of 0xff and the masked packet) agrees with the driver
 *    on IPv4 packets with options of every length, and on short packets;
 *  - every masked field (IPv4 TOS, TTL and checksum; IPv6 traffic class,
 *    flow label and hop limit; UDP checksum; the BTH FECN/BECN/resv6a
 *    byte), set to any value, leaves the ICRC unchanged;
 *  - every other byte, changed, changes the ICRC (or makes the packet
 *    something that is not RoCEv2, which is refused);
 *  - what is not IP/UDP/BTH, or does not fit the skb, is -EINVAL, and
 *    nothing outside the given range is read (exact-size buffers: KASAN);
 *  - rdma_rxe's form of a FLUSH's ICRC is the IBTA ICRC of the packet
 *    followed by a copy of its BTH, FETH and RETH (icrc_rxe_flush_test);
 *  - every CRC-32 candidate this kernel has (crc.c: crc32_le() and the
 *    crypto API's crc32, e.g. crc32-pclmul) gives what crc32_le() gives
 *    at every length and alignment, and the vectors' ICRCs with it in use.
 */
#include <kunit/test.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/udp.h>

#include "../crc.h"
#include "../icrc.h"
#include "../wire.h"
#include "icrc_vectors.h"

/* The ICRC of a vector, as the 4 bytes on the wire */
static __le32 icrc_want(const struct sroce_icrc_vector *v)
{
	__le32 want;

	memcpy(&want, v->pkt + v->len - SROCE_ICRC_LEN, sizeof(want));
	return want;
}

/* sroce_icrc_buf() over an exact-size copy of @len bytes of @pkt */
static int icrc_buf(const u8 *pkt, unsigned int len, __le32 *icrc)
{
	u8 *buf = kmemdup(pkt, len, GFP_KERNEL);
	int err;

	if (!buf)
		return -ENOMEM;
	err = sroce_icrc_buf(buf, len, icrc);
	kfree(buf);
	return err;
}

static unsigned int icrc_iphlen(const u8 *pkt)
{
	return (pkt[0] >> 4) == 6 ? sizeof(struct ipv6hdr) : (pkt[0] & 0xf) * 4;
}

/*
 * The IBTA definition, independently: CRC-32 (init ~0, final ~) over a
 * masked LRH of 8 bytes of 0xff and the packet with its variant fields set
 * to ones.  Assumes a well-formed IPv4 or IPv6 packet.
 */
static __le32 icrc_reference(const u8 *pkt, unsigned int len)
{
	static const u8 lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	unsigned int ihl = icrc_iphlen(pkt);
	u8 *m = kmemdup(pkt, len, GFP_KERNEL);
	u32 crc;

	if (!m)
		return 0;
	if ((pkt[0] >> 4) == 4) {
		m[1] = 0xff;
		m[8] = 0xff;
		m[10] = 0xff;
		m[11] = 0xff;
	} else {
		m[0] |= 0x0f;
		m[1] = 0xff;
		m[2] = 0xff;
		m[3] = 0xff;
		m[7] = 0xff;
	}
	m[ihl + 6] = 0xff;
	m[ihl + 7] = 0xff;
	m[ihl + 8 + 4] = 0xff;
	crc = crc32_le(~0, lrh, sizeof(lrh));
	crc = crc32_le(crc, m, len);
	kfree(m);
	return cpu_to_le32(~crc);
}

/* Is byte @i of @pkt (or, for IPv6 byte 0, its low nibble) masked? */
static bool icrc_masked(const u8 *pkt, unsigned int i)
{
	unsigned int ihl = icrc_iphlen(pkt);

	if ((pkt[0] >> 4) == 4 && (i == 1 || i == 8 || i == 10 || i == 11))
		return true;
	if ((pkt[0] >> 4) == 6 && (i == 1 || i == 2 || i == 3 || i == 7))
		return true;
	return i == ihl + 6 || i == ihl + 7 || i == ihl + 8 + 4;
}

/* ---------------------------------------------------------- vectors */

/* The vectors, bit-exact, from a linear buffer. */
static void icrc_vectors_buf_test(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sroce_icrc_vectors); i++) {
		const struct sroce_icrc_vector *v = &sroce_icrc_vectors[i];
		unsigned int len = v->len - SROCE_ICRC_LEN;
		__le32 icrc = 0;

		KUNIT_EXPECT_EQ_MSG(test, icrc_buf(v->pkt, len, &icrc), 0,
				    "%s", v->name);
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc),
				    le32_to_cpu(icrc_want(v)), "%s", v->name);
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc_reference(v->pkt, len)),
				    le32_to_cpu(icrc_want(v)), "%s reference",
				    v->name);
	}
}

/* A linear skb holding @len bytes of @pkt after @headroom bytes */
static struct sk_buff *icrc_skb_linear(const u8 *pkt, unsigned int len,
				       unsigned int headroom)
{
	struct sk_buff *skb = alloc_skb(headroom + len, GFP_KERNEL);

	if (!skb)
		return NULL;
	skb_reserve(skb, headroom);
	skb_put_data(skb, pkt, len);
	return skb;
}

/*
 * The vectors from linear skbs: at offset 0, behind other data, and with
 * the IP and UDP headers pulled (a negative offset, as on receive).
 */
static void icrc_vectors_skb_linear_test(struct kunit *test)
{
	static const u8 junk[16] = { 0xde, 0xad, 0xbe, 0xef };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sroce_icrc_vectors); i++) {
		const struct sroce_icrc_vector *v = &sroce_icrc_vectors[i];
		unsigned int len = v->len - SROCE_ICRC_LEN;
		unsigned int pull = icrc_iphlen(v->pkt) + sizeof(struct udphdr);
		struct sk_buff *skb;
		__le32 icrc = 0;

		/* at offset 0, the ICRC itself still in the skb */
		skb = icrc_skb_linear(v->pkt, v->len, 0);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		KUNIT_EXPECT_EQ(test, sroce_icrc_skb(skb, 0, len, &icrc), 0);
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc),
				    le32_to_cpu(icrc_want(v)), "%s", v->name);
		/* pulled to the BTH */
		skb_pull(skb, pull);
		icrc = 0;
		KUNIT_EXPECT_EQ(test, sroce_icrc_skb(skb, -(int)pull, len, &icrc),
				0);
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc),
				    le32_to_cpu(icrc_want(v)), "%s pulled",
				    v->name);
		kfree_skb(skb);

		/* behind 16 bytes of something else, exactly @len long */
		skb = alloc_skb(sizeof(junk) + len, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		skb_put_data(skb, junk, sizeof(junk));
		skb_put_data(skb, v->pkt, len);
		icrc = 0;
		KUNIT_EXPECT_EQ(test, sroce_icrc_skb(skb, sizeof(junk), len,
						     &icrc), 0);
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc),
				    le32_to_cpu(icrc_want(v)), "%s offset",
				    v->name);
		kfree_skb(skb);
	}
}

/*
 * An skb with the first @head bytes of @pkt in its linear part and the
 * rest in page frags of at most @chunk bytes, each frag at an odd offset
 * of its own page.
 */
static struct sk_buff *icrc_skb_frags(const u8 *pkt, unsigned int len,
				      unsigned int head, unsigned int chunk)
{
	struct sk_buff *skb = alloc_skb(head ? head : 1, GFP_KERNEL);
	unsigned int off = head;

	if (!skb)
		return NULL;
	skb_put_data(skb, pkt, head);
	while (off < len) {
		unsigned int n = min(chunk, len - off);
		int nr = skb_shinfo(skb)->nr_frags;
		struct page *page;

		if (nr >= MAX_SKB_FRAGS)
			n = len - off;
		page = alloc_page(GFP_KERNEL);
		if (!page || nr >= MAX_SKB_FRAGS) {
			if (page)
				__free_page(page);
			kfree_skb(skb);
			return NULL;
		}
		memcpy(page_address(page) + 3, pkt + off, n);
		skb_add_rx_frag(skb, nr, page, 3, n, PAGE_SIZE);
		off += n;
	}
	return skb;
}

/*
 * The vectors from nonlinear skbs, split between the linear part and the
 * frags at every byte, with frags of 1, 7 and 64 bytes: the masked header
 * copy and the CRC walk both cross the boundaries.
 */
static void icrc_vectors_skb_frags_test(struct kunit *test)
{
	static const unsigned int chunks[] = { 1, 7, 64 };
	unsigned int i, head, c, n = 0;

	for (i = 0; i < ARRAY_SIZE(sroce_icrc_vectors); i++) {
		const struct sroce_icrc_vector *v = &sroce_icrc_vectors[i];
		unsigned int len = v->len - SROCE_ICRC_LEN;

		for (c = 0; c < ARRAY_SIZE(chunks); c++) {
			for (head = 0; head <= len; head++) {
				struct sk_buff *skb;
				__le32 icrc = 0;

				/* 1-byte frags: keep within MAX_SKB_FRAGS */
				if (len - head > chunks[c] * (MAX_SKB_FRAGS - 1))
					continue;
				skb = icrc_skb_frags(v->pkt, len, head,
						     chunks[c]);
				KUNIT_ASSERT_NOT_NULL(test, skb);
				KUNIT_EXPECT_EQ(test, skb->len, len);
				KUNIT_EXPECT_EQ(test,
						sroce_icrc_skb(skb, 0, len, &icrc),
						0);
				KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc),
						    le32_to_cpu(icrc_want(v)),
						    "%s head %u chunk %u",
						    v->name, head, chunks[c]);
				kfree_skb(skb);
				n++;
			}
		}
	}
	kunit_info(test, "%u fragmented skbs\n", n);
}

/* The vectors from an skb whose tail is on its frag_list. */
static void icrc_vectors_skb_frag_list_test(struct kunit *test)
{
	unsigned int i, split;

	for (i = 0; i < ARRAY_SIZE(sroce_icrc_vectors); i++) {
		const struct sroce_icrc_vector *v = &sroce_icrc_vectors[i];
		unsigned int len = v->len - SROCE_ICRC_LEN;

		for (split = 1; split < len; split += 5) {
			struct sk_buff *skb, *tail;
			__le32 icrc = 0;

			skb = icrc_skb_linear(v->pkt, split, 0);
			tail = icrc_skb_linear(v->pkt + split, len - split, 0);
			KUNIT_ASSERT_NOT_NULL(test, skb);
			KUNIT_ASSERT_NOT_NULL(test, tail);
			skb_shinfo(skb)->frag_list = tail;
			skb->len += tail->len;
			skb->data_len += tail->len;
			skb->truesize += tail->truesize;
			KUNIT_EXPECT_EQ(test, sroce_icrc_skb(skb, 0, len, &icrc),
					0);
			KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc),
					    le32_to_cpu(icrc_want(v)),
					    "%s split %u", v->name, split);
			kfree_skb(skb);
		}
	}
}

/* ------------------------------------------------------ masked fields */

/*
 * Each masked byte of each vector, set to several values, leaves the
 * ICRC as it was (for IPv6 byte 0 only the traffic class nibble is
 * masked; the version nibble is not).
 */
static void icrc_masked_fields_test(struct kunit *test)
{
	static const u8 vals[] = { 0x00, 0x01, 0x5a, 0x80, 0xa5, 0xfe, 0xff };
	unsigned int i, b, k;

	for (i = 0; i < ARRAY_SIZE(sroce_icrc_vectors); i++) {
		const struct sroce_icrc_vector *v = &sroce_icrc_vectors[i];
		unsigned int len = v->len - SROCE_ICRC_LEN;
		u8 *pkt = kunit_kmalloc(test, len, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, pkt);
		for (b = 0; b < len; b++) {
			bool nibble = b == 0 && (v->pkt[0] >> 4) == 6;

			if (!nibble && !icrc_masked(v->pkt, b))
				continue;
			for (k = 0; k < ARRAY_SIZE(vals); k++) {
				__le32 icrc = 0;

				memcpy(pkt, v->pkt, len);
				pkt[b] = nibble ? 0x60 | (vals[k] & 0xf) : vals[k];
				KUNIT_EXPECT_EQ(test, icrc_buf(pkt, len, &icrc), 0);
				KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc),
						    le32_to_cpu(icrc_want(v)),
						    "%s byte %u = 0x%02x",
						    v->name, b, pkt[b]);
			}
		}
		/* all masked fields at once */
		memcpy(pkt, v->pkt, len);
		for (b = 0; b < len; b++)
			if (icrc_masked(v->pkt, b))
				pkt[b] ^= 0x3c;
		if ((v->pkt[0] >> 4) == 6)
			pkt[0] ^= 0x0f;
		KUNIT_EXPECT_EQ(test, le32_to_cpu(icrc_reference(pkt, len)),
				le32_to_cpu(icrc_want(v)));
		{
			__le32 icrc = 0;

			KUNIT_EXPECT_EQ(test, icrc_buf(pkt, len, &icrc), 0);
			KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc),
					    le32_to_cpu(icrc_want(v)),
					    "%s all masked", v->name);
		}
		kunit_kfree(test, pkt);
	}
}

/*
 * Every byte that is not masked, changed in any one bit or all bits,
 * changes the ICRC, or makes the packet one the ICRC code refuses
 * (another IP version, header length or protocol).
 */
static void icrc_covered_bytes_test(struct kunit *test)
{
	static const u8 flips[] = { 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40,
				    0x80, 0xff };
	unsigned int i, b, k, refused = 0;

	for (i = 0; i < ARRAY_SIZE(sroce_icrc_vectors); i++) {
		const struct sroce_icrc_vector *v = &sroce_icrc_vectors[i];
		unsigned int len = v->len - SROCE_ICRC_LEN;
		u8 *pkt = kunit_kmalloc(test, len, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, pkt);
		for (b = 0; b < len; b++) {
			if (icrc_masked(v->pkt, b))
				continue;
			for (k = 0; k < ARRAY_SIZE(flips); k++) {
				u8 flip = flips[k];
				__le32 icrc = icrc_want(v);
				int err;

				/* IPv6 byte 0: only the version is covered */
				if (b == 0 && (v->pkt[0] >> 4) == 6) {
					flip &= 0xf0;
					if (!flip)
						continue;
				}
				memcpy(pkt, v->pkt, len);
				pkt[b] ^= flip;
				err = icrc_buf(pkt, len, &icrc);
				if (err) {
					KUNIT_EXPECT_EQ(test, err, -EINVAL);
					refused++;
					continue;
				}
				KUNIT_EXPECT_NE_MSG(test, le32_to_cpu(icrc),
						    le32_to_cpu(icrc_want(v)),
						    "%s byte %u ^ 0x%02x",
						    v->name, b, flip);
			}
		}
		kunit_kfree(test, pkt);
	}
	kunit_info(test, "%u changes refused as not RoCEv2\n", refused);
}

/* ------------------------------------------------- other packet shapes */

/*
 * A synthetic IPv4 RoCEv2 packet with @optlen bytes of options and @plen
 * bytes of payload after the BTH, filled in @buf; returns its length.
 */
static unsigned int icrc_make_ipv4(u8 *buf, unsigned int optlen,
				   unsigned int plen)
{
	unsigned int ihl = sizeof(struct iphdr) + optlen, i;
	struct iphdr *iph = (struct iphdr *)buf;
	struct udphdr *uh = (struct udphdr *)(buf + ihl);
	unsigned int len = ihl + sizeof(*uh) + SROCE_BTH_LEN + plen;

	for (i = 0; i < len; i++)
		buf[i] = i * 7 + 3;
	iph->version = 4;
	iph->ihl = ihl / 4;
	iph->protocol = IPPROTO_UDP;
	iph->tot_len = htons(len + SROCE_ICRC_LEN);
	uh->dest = htons(4791);
	return len;
}

/*
 * IPv4 with every option length (IHL 5 to 15), short and long payloads:
 * the driver agrees with the reference, including where the masked
 * header copy (IP + UDP + BTH) is all there is.
 */
static void icrc_ipv4_options_test(struct kunit *test)
{
	static const unsigned int plens[] = { 0, 4, 8, 100, 1024 };
	u8 *buf = kunit_kmalloc(test, 60 + 8 + SROCE_BTH_LEN + 1024, GFP_KERNEL);
	unsigned int opt, p;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (opt = 0; opt <= 40; opt += 4) {
		for (p = 0; p < ARRAY_SIZE(plens); p++) {
			unsigned int len = icrc_make_ipv4(buf, opt, plens[p]);
			__le32 icrc = 0;

			KUNIT_EXPECT_EQ(test, icrc_buf(buf, len, &icrc), 0);
			KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc),
					    le32_to_cpu(icrc_reference(buf, len)),
					    "options %u payload %u", opt,
					    plens[p]);
		}
	}
}

/* ------------------------------------------------------- bad input */

/*
 * Not IPv4 or IPv6, an IPv4 header length below 5, a protocol other
 * than UDP, or too short to hold IP, UDP and BTH: -EINVAL, at every
 * length, from exact-size buffers.
 */
static void icrc_bad_packets_test(struct kunit *test)
{
	const struct sroce_icrc_vector *v4 = &sroce_icrc_vectors[2];
	const struct sroce_icrc_vector *v6 = &sroce_icrc_vectors[6];
	u8 *pkt = kunit_kmalloc(test, 512, GFP_KERNEL);
	unsigned int len, ver;
	__le32 icrc;

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	KUNIT_ASSERT_EQ(test, v4->pkt[0] >> 4, 4);
	KUNIT_ASSERT_EQ(test, v6->pkt[0] >> 4, 6);

	/* too short, IPv4 and IPv6 */
	for (len = 0; len < 20 + 8 + SROCE_BTH_LEN; len++)
		KUNIT_EXPECT_EQ_MSG(test, icrc_buf(v4->pkt, len, &icrc),
				    -EINVAL, "IPv4 len %u", len);
	for (len = 0; len < 40 + 8 + SROCE_BTH_LEN; len++)
		KUNIT_EXPECT_EQ_MSG(test, icrc_buf(v6->pkt, len, &icrc),
				    -EINVAL, "IPv6 len %u", len);
	KUNIT_EXPECT_EQ(test, icrc_buf(v4->pkt, 20 + 8 + SROCE_BTH_LEN, &icrc),
			0);
	KUNIT_EXPECT_EQ(test, icrc_buf(v6->pkt, 40 + 8 + SROCE_BTH_LEN, &icrc),
			0);

	/* other IP versions */
	len = v4->len - SROCE_ICRC_LEN;
	for (ver = 0; ver < 16; ver++) {
		if (ver == 4 || ver == 6)
			continue;
		memcpy(pkt, v4->pkt, len);
		pkt[0] = ver << 4 | 5;
		KUNIT_EXPECT_EQ(test, icrc_buf(pkt, len, &icrc), -EINVAL);
	}
	/* IHL below 5 */
	for (ver = 0; ver < 5; ver++) {
		memcpy(pkt, v4->pkt, len);
		pkt[0] = 0x40 | ver;
		KUNIT_EXPECT_EQ(test, icrc_buf(pkt, len, &icrc), -EINVAL);
	}
	/* IHL beyond the packet */
	memcpy(pkt, v4->pkt, len);
	pkt[0] = 0x4f;
	KUNIT_EXPECT_EQ(test, icrc_buf(pkt, 60 + 8 + SROCE_BTH_LEN - 1, &icrc),
			-EINVAL);
	/* not UDP */
	memcpy(pkt, v4->pkt, len);
	pkt[9] = IPPROTO_TCP;
	KUNIT_EXPECT_EQ(test, icrc_buf(pkt, len, &icrc), -EINVAL);
	len = v6->len - SROCE_ICRC_LEN;
	memcpy(pkt, v6->pkt, len);
	pkt[6] = IPPROTO_TCP;
	KUNIT_EXPECT_EQ(test, icrc_buf(pkt, len, &icrc), -EINVAL);
}

/* A range that is not inside the skb is -EINVAL. */
static void icrc_skb_range_test(struct kunit *test)
{
	const struct sroce_icrc_vector *v = &sroce_icrc_vectors[2];
	unsigned int len = v->len - SROCE_ICRC_LEN;
	struct sk_buff *skb;
	__le32 icrc;

	skb = icrc_skb_linear(v->pkt, len, 32);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, sroce_icrc_skb(skb, 0, len, &icrc), 0);
	KUNIT_EXPECT_EQ(test, sroce_icrc_skb(skb, 0, len + 1, &icrc), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_icrc_skb(skb, 1, len, &icrc), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_icrc_skb(skb, 0, UINT_MAX, &icrc),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_icrc_skb(skb, INT_MAX, len, &icrc),
			-EINVAL);
	/* before the headroom */
	KUNIT_EXPECT_EQ(test, sroce_icrc_skb(skb, -(int)skb_headroom(skb) - 1,
					     len, &icrc), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_icrc_skb(skb, INT_MIN, len, &icrc),
			-EINVAL);
	kfree_skb(skb);
}

/* ---------------------------------------------- the CRC-32 candidates */

/*
 * Each usable candidate against crc32_le() over random bytes: every
 * length up to 300 (the PCLMULQDQ code takes 64 bytes and more, the rest
 * goes to the table), packet sizes around 4 KiB, at every alignment
 * within 16 bytes, from a running register.
 */
static void icrc_crc_candidates_test(struct kunit *test)
{
	static const unsigned int big[] = { 1023, 1024, 4095, 4096, 4097 };
	u8 *buf = kunit_kmalloc(test, 4096 + 16 + 16, GFP_KERNEL);
	unsigned int i, len, off, k;
	u32 seed;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	get_random_bytes(buf, 4096 + 32);
	for (i = 0; i < SROCE_CRC_NR; i++) {
		const struct sroce_crc_impl *impl = &sroce_crc_impls[i];

		if (!impl->usable)
			continue;
		kunit_info(test, "%s%s%s: %u MB/s at load\n", impl->name,
			   impl->driver ? ":" : "", impl->driver ?: "",
			   impl->mbps);
		for (off = 0; off < 16; off++) {
			seed = get_random_u32();
			for (len = 0; len <= 300; len++)
				KUNIT_EXPECT_EQ_MSG(test,
						    impl->update(seed, buf + off, len),
						    crc32_le(seed, buf + off, len),
						    "%s len %u off %u", impl->name,
						    len, off);
			for (k = 0; k < ARRAY_SIZE(big); k++)
				KUNIT_EXPECT_EQ_MSG(test,
						    impl->update(seed, buf + off, big[k]),
						    crc32_le(seed, buf + off, big[k]),
						    "%s len %u off %u", impl->name,
						    big[k], off);
		}
	}
}

/*
 * The vectors, from a buffer and from skbs split at every byte, with each
 * usable candidate in use; the one chosen at load is back in use after.
 */
static void icrc_vectors_every_crc_test(struct kunit *test)
{
	unsigned int was = sroce_crc_in_use(), i, n = 0;

	for (i = 0; i < SROCE_CRC_NR; i++) {
		if (sroce_crc_use(i))
			continue;
		n++;
		icrc_vectors_buf_test(test);
		icrc_vectors_skb_frags_test(test);
	}
	KUNIT_EXPECT_EQ(test, sroce_crc_use(was), 0);
	KUNIT_EXPECT_GE(test, n, 1U);
	KUNIT_EXPECT_EQ(test, sroce_crc_use(SROCE_CRC_NR), -EINVAL);
}

/*
 * rdma_rxe's ICRC of a FLUSH (sroce_icrc_rxe_flush()), as its rxe_icrc.c
 * makes it with FLUSH's payload offset 0: the IBTA ICRC of a packet that
 * goes on after the RETH with a raw copy of the BTH, FETH and RETH.
 */
static void icrc_rxe_flush_test(struct kunit *test)
{
	/* IPv4, UDP, BTH (RC FLUSH, AckReq), FETH, RETH; then the copy */
	u8 pkt[20 + 8 + 32 + 32] = {
		0x45, 0x02, 0x00, 0x40, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11,
		0x00, 0x00, 0xc0, 0xa8, 0x4d, 0x02, 0xc0, 0xa8, 0x4d, 0x01,
		0xc0, 0x01, 0x12, 0xb7, 0x00, 0x2c, 0x00, 0x00,
		0x1c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
		0x80, 0x12, 0x34, 0x56, 0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x50, 0x00,
		0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x10, 0x00,
	};
	__le32 rules, rxe;

	memcpy(pkt + 60, pkt + 28, 32);
	KUNIT_ASSERT_EQ(test, icrc_buf(pkt, 60, &rules), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rules),
			le32_to_cpu(icrc_reference(pkt, 60)));
	rxe = rules;
	sroce_icrc_rxe_flush(&rxe, pkt + 28, 32);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rxe),
			le32_to_cpu(icrc_reference(pkt, sizeof(pkt))));
	KUNIT_EXPECT_NE(test, le32_to_cpu(rxe), le32_to_cpu(rules));
}

static struct kunit_case sroce_icrc_cases[] = {
	KUNIT_CASE(icrc_vectors_buf_test),
	KUNIT_CASE(icrc_vectors_skb_linear_test),
	KUNIT_CASE(icrc_vectors_skb_frags_test),
	KUNIT_CASE(icrc_vectors_skb_frag_list_test),
	KUNIT_CASE(icrc_masked_fields_test),
	KUNIT_CASE(icrc_covered_bytes_test),
	KUNIT_CASE(icrc_ipv4_options_test),
	KUNIT_CASE(icrc_bad_packets_test),
	KUNIT_CASE(icrc_skb_range_test),
	KUNIT_CASE(icrc_crc_candidates_test),
	KUNIT_CASE(icrc_vectors_every_crc_test),
	KUNIT_CASE(icrc_rxe_flush_test),
	{}
};

static struct kunit_suite sroce_icrc_suite = {
	.name = "sroce_icrc",
	.test_cases = sroce_icrc_cases,
};

kunit_test_suites(&sroce_icrc_suite);
