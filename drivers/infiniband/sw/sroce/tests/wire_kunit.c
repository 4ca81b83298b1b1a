// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the sroce wire codec (wire.h, wire.c): the opcode table,
 * sroce_pkt_build() and sroce_pkt_parse(), PSN arithmetic and the AETH
 * syndromes.
 *
 * What it proves:
 *  - the opcode table is the IBTA one: exactly the RC, UC and UD opcodes
 *    sroce claims, each with the IBTA extension headers, a header length
 *    that agrees with them, one transport, one operation and one position;
 *  - every supported opcode round-trips through build and parse with every
 *    combination of BTH flags and with payload lengths at the edges of its
 *    rules, and fields of headers the opcode does not carry come back zero;
 *  - the known packets of tests/icrc_vectors.h parse to their known fields,
 *    and building those fields gives their bytes back;
 *  - malformed input is rejected with the documented errno and without a
 *    read past @len (each packet is parsed from a buffer of exactly @len
 *    bytes, so KASAN catches an over-read): every truncation, every nonzero
 *    TVer, every unsupported opcode, the pad and payload rules, and the
 *    8-byte payload of ATOMIC WRITE;
 *  - PSN compare and add are right across the 24-bit wrap, ignore the
 *    bits above 24, and window checks built on them work across the wrap;
 *  - AETH syndromes encode and decode for ACK, RNR NAK and NAK codes.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../wire.h"
#include "icrc_vectors.h"

/* ------------------------------------------------------ opcode table */

/**
 * struct wire_ibta_opcode - an IBTA opcode as the spec lists it
 * @opcode: BTH opcode
 * @hdrs: SROCE_HDR_* extension headers, in the IBTA table
 * @pos: SROCE_F_FIRST/MIDDLE/LAST/ONLY
 * @op: the SROCE_F_* operation bit
 * @payload: whether the opcode may carry payload
 */
struct wire_ibta_opcode {
	u8 opcode;
	u32 hdrs;
	u32 pos;
	u32 op;
	bool payload;
};

#define F_FIRST		SROCE_F_FIRST
#define F_MIDDLE	SROCE_F_MIDDLE
#define F_LAST		SROCE_F_LAST
#define F_ONLY		SROCE_F_ONLY

/* IBTA vol. 1 table 38 (and A19 for FLUSH and ATOMIC WRITE) */
static const struct wire_ibta_opcode wire_ibta_opcodes[] = {
	{ 0x00, 0, F_FIRST, SROCE_F_SEND, true },
	{ 0x01, 0, F_MIDDLE, SROCE_F_SEND, true },
	{ 0x02, 0, F_LAST, SROCE_F_SEND, true },
	{ 0x03, SROCE_HDR_IMMDT, F_LAST, SROCE_F_SEND, true },
	{ 0x04, 0, F_ONLY, SROCE_F_SEND, true },
	{ 0x05, SROCE_HDR_IMMDT, F_ONLY, SROCE_F_SEND, true },
	{ 0x06, SROCE_HDR_RETH, F_FIRST, SROCE_F_WRITE, true },
	{ 0x07, 0, F_MIDDLE, SROCE_F_WRITE, true },
	{ 0x08, 0, F_LAST, SROCE_F_WRITE, true },
	{ 0x09, SROCE_HDR_IMMDT, F_LAST, SROCE_F_WRITE, true },
	{ 0x0a, SROCE_HDR_RETH, F_ONLY, SROCE_F_WRITE, true },
	{ 0x0b, SROCE_HDR_RETH | SROCE_HDR_IMMDT, F_ONLY, SROCE_F_WRITE, true },
	{ 0x0c, SROCE_HDR_RETH, F_ONLY, SROCE_F_READ_REQ, false },
	{ 0x0d, SROCE_HDR_AETH, F_FIRST, SROCE_F_READ_RESP, true },
	{ 0x0e, 0, F_MIDDLE, SROCE_F_READ_RESP, true },
	{ 0x0f, SROCE_HDR_AETH, F_LAST, SROCE_F_READ_RESP, true },
	{ 0x10, SROCE_HDR_AETH, F_ONLY, SROCE_F_READ_RESP, true },
	{ 0x11, SROCE_HDR_AETH, F_ONLY, SROCE_F_ACK, false },
	{ 0x12, SROCE_HDR_AETH | SROCE_HDR_ATMACK, F_ONLY, SROCE_F_ATOMIC_ACK,
	  false },
	{ 0x13, SROCE_HDR_ATMETH, F_ONLY, SROCE_F_ATOMIC, false },
	{ 0x14, SROCE_HDR_ATMETH, F_ONLY, SROCE_F_ATOMIC, false },
	{ 0x16, SROCE_HDR_IETH, F_LAST, SROCE_F_SEND, true },
	{ 0x17, SROCE_HDR_IETH, F_ONLY, SROCE_F_SEND, true },
	{ 0x1c, SROCE_HDR_FETH | SROCE_HDR_RETH, F_ONLY, SROCE_F_FLUSH, false },
	{ 0x1d, SROCE_HDR_RETH, F_ONLY, SROCE_F_ATOMIC_WRITE, true },
	{ 0x64, SROCE_HDR_DETH, F_ONLY, SROCE_F_SEND, true },
	{ 0x65, SROCE_HDR_DETH | SROCE_HDR_IMMDT, F_ONLY, SROCE_F_SEND, true },
};

#define WIRE_OPS	(SROCE_F_SEND | SROCE_F_WRITE | SROCE_F_READ_REQ | \
			 SROCE_F_ATOMIC | SROCE_F_READ_RESP | SROCE_F_ACK | \
			 SROCE_F_ATOMIC_ACK | SROCE_F_FLUSH | \
			 SROCE_F_ATOMIC_WRITE)
#define WIRE_POS	(SROCE_F_FIRST | SROCE_F_MIDDLE | SROCE_F_LAST)
#define WIRE_RESP_OPS	(SROCE_F_READ_RESP | SROCE_F_ACK | SROCE_F_ATOMIC_ACK)

/* UC has the RC SEND and RDMA WRITE opcodes, 0x00-0x0b, at 0x20-0x2b */
#define WIRE_NR_UC	12

static const struct wire_ibta_opcode *wire_ibta(u8 opcode)
{
	unsigned int i;

	if ((opcode & SROCE_TRANSPORT_MASK) == SROCE_TRANSPORT_UC) {
		if ((opcode & SROCE_OP_MASK) >= WIRE_NR_UC)
			return NULL;
		opcode &= SROCE_OP_MASK;
	}
	for (i = 0; i < ARRAY_SIZE(wire_ibta_opcodes); i++)
		if (wire_ibta_opcodes[i].opcode == opcode)
			return &wire_ibta_opcodes[i];
	return NULL;
}

/* The header length the extension header flags imply. */
static unsigned int wire_hdrs_len(u32 flags)
{
	unsigned int len = SROCE_BTH_LEN;

	if (flags & SROCE_HDR_DETH)
		len += SROCE_DETH_LEN;
	if (flags & SROCE_HDR_FETH)
		len += SROCE_FETH_LEN;
	if (flags & SROCE_HDR_RETH)
		len += SROCE_RETH_LEN;
	if (flags & SROCE_HDR_ATMETH)
		len += SROCE_ATMETH_LEN;
	if (flags & SROCE_HDR_AETH)
		len += SROCE_AETH_LEN;
	if (flags & SROCE_HDR_ATMACK)
		len += SROCE_ATMACK_LEN;
	if (flags & SROCE_HDR_IMMDT)
		len += SROCE_IMMDT_LEN;
	if (flags & SROCE_HDR_IETH)
		len += SROCE_IETH_LEN;
	return len;
}

/*
 * Exactly the IBTA opcodes are supported, and each one's table entry says
 * what the IBTA says about it.
 */
static void wire_opcode_table_test(struct kunit *test)
{
	unsigned int op, supported = 0;

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = sroce_opcode(op);
		const struct wire_ibta_opcode *ibta = wire_ibta(op);
		u32 tr, f;

		if (!ibta) {
			KUNIT_EXPECT_NULL_MSG(test, info, "opcode 0x%02x", op);
			continue;
		}
		KUNIT_ASSERT_NOT_NULL_MSG(test, info, "opcode 0x%02x", op);
		supported++;
		f = info->flags;
		KUNIT_EXPECT_NOT_NULL(test, info->name);
		KUNIT_EXPECT_EQ_MSG(test, f & SROCE_HDR_MASK, ibta->hdrs,
				    "%s headers", info->name);
		KUNIT_EXPECT_EQ_MSG(test, info->hdr_len, wire_hdrs_len(f),
				    "%s hdr_len", info->name);
		KUNIT_EXPECT_EQ_MSG(test, f & WIRE_POS, ibta->pos,
				    "%s position", info->name);
		KUNIT_EXPECT_EQ_MSG(test, f & WIRE_OPS, ibta->op,
				    "%s operation", info->name);
		KUNIT_EXPECT_EQ_MSG(test, !!(f & SROCE_F_PAYLOAD),
				    ibta->payload, "%s payload", info->name);
		/* requester xor responder, by operation */
		if (ibta->op & WIRE_RESP_OPS)
			KUNIT_EXPECT_EQ_MSG(test, f & (SROCE_F_REQ | SROCE_F_RESP),
					    (u32)SROCE_F_RESP, "%s", info->name);
		else
			KUNIT_EXPECT_EQ_MSG(test, f & (SROCE_F_REQ | SROCE_F_RESP),
					    (u32)SROCE_F_REQ, "%s", info->name);
		/* one transport flag, the one of the opcode's top bits */
		tr = op & SROCE_TRANSPORT_MASK;
		KUNIT_EXPECT_EQ_MSG(test,
				    f & (SROCE_F_RC | SROCE_F_UC | SROCE_F_UD),
				    (u32)(tr == SROCE_TRANSPORT_RC ? SROCE_F_RC :
					  tr == SROCE_TRANSPORT_UC ? SROCE_F_UC :
					  SROCE_F_UD), "%s transport", info->name);
		KUNIT_EXPECT_LE(test, info->hdr_len, SROCE_WIRE_MAX_HDR_LEN);
		KUNIT_EXPECT_EQ(test, info->hdr_len % 4, 0);
	}
	KUNIT_EXPECT_EQ(test, supported,
			ARRAY_SIZE(wire_ibta_opcodes) + WIRE_NR_UC);
}

/* --------------------------------------------------------- helpers */

/* Payload lengths the opcode's rules allow, for the round trips. */
static const u32 wire_payload_lens[] = { 0, 1, 2, 3, 4, 5, 8, 255, 256, 4096 };

static bool wire_payload_allowed(u32 flags, u32 len)
{
	if (!(flags & SROCE_F_PAYLOAD))
		return !len;
	if (flags & SROCE_F_ATOMIC_WRITE)
		return len == SROCE_ATOMIC_WRITE_LEN;
	if ((flags & SROCE_F_ONLY) == SROCE_F_ONLY)
		return true;
	if (!len)
		return false;
	/* first and middle packets are never padded */
	return (flags & SROCE_F_LAST) || !(len & 3);
}

/* A packet with every field set to something recognisable. */
static void wire_fill(struct sroce_pkt *pkt, u8 opcode, unsigned int seed)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = opcode;
	pkt->pkey = 0x8000 | seed;
	pkt->dqpn = 0xa5a5a5 ^ seed;
	pkt->psn = 0xfffff0 + seed;	/* crosses the wrap */
	pkt->va = 0x0123456789abcdefULL ^ seed;
	pkt->rkey = 0xfedcba98 ^ seed;
	pkt->dma_len = 0x80000000 | seed;
	pkt->swap_add = 0x1122334455667788ULL + seed;
	pkt->compare = 0x99aabbccddeeff00ULL + seed;
	pkt->syndrome = 0x60 + (seed & 0x1f);
	pkt->msn = 0xabcdef ^ seed;
	pkt->atomic_orig = 0xdeadbeefcafef00dULL ^ seed;
	pkt->imm = cpu_to_be32(0x11223344 ^ seed);
	pkt->inv_rkey = 0x55667788 ^ seed;
	pkt->qkey = SROCE_GSI_QKEY ^ seed;
	pkt->sqpn = 0x123456 ^ seed;
	pkt->flush_type = seed & SROCE_FETH_TYPE;
	pkt->flush_level = (seed >> 4) & 3;
}

/*
 * Build @in into a buffer of exactly the packet's length (headers,
 * payload, pad, ICRC), parse it from there, and return parse's result.
 */
static int wire_build_parse(struct kunit *test, const struct sroce_pkt *in,
			    struct sroce_pkt *out, unsigned int *lenp)
{
	u8 hdr[SROCE_WIRE_MAX_HDR_LEN];
	unsigned int hlen, len;
	u8 *buf;
	int err;

	memset(hdr, 0xee, sizeof(hdr));
	hlen = sroce_pkt_build(hdr, in);
	KUNIT_ASSERT_GT(test, hlen, 0);
	len = hlen + in->payload_len + sroce_pad(in->payload_len) +
	      SROCE_ICRC_LEN;
	buf = kmalloc(len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	memcpy(buf, hdr, hlen);
	memset(buf + hlen, 0x5a, len - hlen);
	err = sroce_pkt_parse(buf, len, out);
	kfree(buf);
	if (lenp)
		*lenp = len;
	return err;
}

/* @out is @in after a trip over the wire, for the headers @in carries. */
static void wire_expect_same(struct kunit *test, const struct sroce_pkt *in,
			     const struct sroce_pkt *out)
{
	const struct sroce_opcode_info *info = sroce_opcode(in->opcode);
	u32 f = info->flags;
	bool reth = f & (SROCE_HDR_RETH | SROCE_HDR_ATMETH);

	KUNIT_EXPECT_EQ(test, out->opcode, in->opcode);
	KUNIT_EXPECT_EQ(test, out->se, in->se);
	KUNIT_EXPECT_EQ(test, out->mig, in->mig);
	KUNIT_EXPECT_EQ(test, out->fecn, in->fecn);
	KUNIT_EXPECT_EQ(test, out->becn, in->becn);
	KUNIT_EXPECT_EQ(test, out->ack_req, in->ack_req);
	KUNIT_EXPECT_EQ(test, out->pad, sroce_pad(in->payload_len));
	KUNIT_EXPECT_EQ(test, out->pkey, in->pkey);
	KUNIT_EXPECT_EQ(test, out->dqpn, in->dqpn & SROCE_QPN_MASK);
	KUNIT_EXPECT_EQ(test, out->psn, in->psn & SROCE_PSN_MASK);
	KUNIT_EXPECT_EQ(test, out->flags, f);
	KUNIT_EXPECT_EQ(test, out->hdr_len, info->hdr_len);
	KUNIT_EXPECT_EQ(test, out->payload_len, in->payload_len);

	KUNIT_EXPECT_EQ(test, out->va, reth ? in->va : 0);
	KUNIT_EXPECT_EQ(test, out->rkey, reth ? in->rkey : 0);
	KUNIT_EXPECT_EQ(test, out->dma_len,
			(f & SROCE_HDR_RETH) ? in->dma_len : 0);
	KUNIT_EXPECT_EQ(test, out->swap_add,
			(f & SROCE_HDR_ATMETH) ? in->swap_add : 0);
	KUNIT_EXPECT_EQ(test, out->compare,
			(f & SROCE_HDR_ATMETH) ? in->compare : 0);
	KUNIT_EXPECT_EQ(test, out->syndrome,
			(f & SROCE_HDR_AETH) ? in->syndrome : 0);
	KUNIT_EXPECT_EQ(test, out->msn,
			(f & SROCE_HDR_AETH) ? in->msn & SROCE_MSN_MASK : 0);
	KUNIT_EXPECT_EQ(test, out->atomic_orig,
			(f & SROCE_HDR_ATMACK) ? in->atomic_orig : 0);
	KUNIT_EXPECT_EQ(test, (__force u32)out->imm,
			(f & SROCE_HDR_IMMDT) ? (__force u32)in->imm : 0);
	KUNIT_EXPECT_EQ(test, out->inv_rkey,
			(f & SROCE_HDR_IETH) ? in->inv_rkey : 0);
	KUNIT_EXPECT_EQ(test, out->qkey, (f & SROCE_HDR_DETH) ? in->qkey : 0);
	KUNIT_EXPECT_EQ(test, out->sqpn,
			(f & SROCE_HDR_DETH) ? in->sqpn & SROCE_QPN_MASK : 0);
	KUNIT_EXPECT_EQ(test, out->flush_type,
			(f & SROCE_HDR_FETH) ? in->flush_type : 0);
	KUNIT_EXPECT_EQ(test, out->flush_level,
			(f & SROCE_HDR_FETH) ? in->flush_level : 0);
}

/* ------------------------------------------------------ round trips */

/*
 * Every supported opcode, with each of the 32 combinations of the BTH
 * flags (SE, MigReq, FECN, BECN, AckReq) and every allowed payload length
 * of wire_payload_lens, survives build and parse.
 */
static void wire_roundtrip_test(struct kunit *test)
{
	struct sroce_pkt in, out;
	unsigned int op, bits, i, n = 0;

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = sroce_opcode(op);

		if (!info)
			continue;
		for (i = 0; i < ARRAY_SIZE(wire_payload_lens); i++) {
			u32 plen = wire_payload_lens[i];

			if (!wire_payload_allowed(info->flags, plen))
				continue;
			for (bits = 0; bits < 32; bits++) {
				unsigned int len;
				int err;

				wire_fill(&in, op, bits + i);
				in.se = bits & 1;
				in.mig = bits & 2;
				in.fecn = bits & 4;
				in.becn = bits & 8;
				in.ack_req = bits & 16;
				in.payload_len = plen;
				err = wire_build_parse(test, &in, &out, &len);
				KUNIT_ASSERT_EQ_MSG(test, err, 0,
						    "%s payload %u bits %u",
						    info->name, plen, bits);
				wire_expect_same(test, &in, &out);
				KUNIT_EXPECT_EQ(test, out.hdr_len +
						out.payload_len + out.pad +
						SROCE_ICRC_LEN, len);
				n++;
			}
		}
	}
	kunit_info(test, "%u round trips\n", n);
}

/*
 * Build masks what does not fit (24-bit QPNs, PSNs and MSNs, the FETH
 * bits), writes TVer and reserved bits as zero, reads neither pad nor
 * flags from the packet, and returns the opcode's header length.
 */
static void wire_build_masks_test(struct kunit *test)
{
	struct sroce_pkt in, out;
	u8 buf[SROCE_WIRE_MAX_HDR_LEN];
	const struct sroce_bth *bth = (const void *)buf;
	unsigned int op;

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = sroce_opcode(op);
		unsigned int len;

		if (!info)
			continue;
		wire_fill(&in, op, 0);
		in.dqpn = 0xffffffff;
		in.psn = 0xffffffff;
		in.msn = 0xffffffff;
		in.sqpn = 0xffffffff;
		in.flush_type = 0xff;
		in.flush_level = 0xff;
		in.pad = 3;		/* ignored: payload 0 means pad 0 */
		in.flags = ~0u;		/* ignored */
		in.hdr_len = 1;		/* ignored */
		in.payload_len = (info->flags & SROCE_F_ATOMIC_WRITE) ? 8 :
				 (info->flags & SROCE_F_ONLY) == SROCE_F_ONLY ?
				 0 : 4;
		memset(buf, 0xee, sizeof(buf));
		KUNIT_EXPECT_EQ(test, sroce_pkt_build(buf, &in), info->hdr_len);
		KUNIT_EXPECT_EQ(test, bth->flags & (SROCE_BTH_TVER | SROCE_BTH_PAD),
				0);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(bth->qpn) & ~SROCE_QPN_MASK &
				~(SROCE_BTH_FECN | SROCE_BTH_BECN), 0);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(bth->apsn) & ~SROCE_PSN_MASK &
				~SROCE_BTH_ACKREQ, 0);
		/* bytes past the headers are not touched */
		if (info->hdr_len < sizeof(buf))
			KUNIT_EXPECT_EQ(test, buf[info->hdr_len], 0xee);

		KUNIT_ASSERT_EQ(test, wire_build_parse(test, &in, &out, &len), 0);
		KUNIT_EXPECT_EQ(test, out.dqpn, SROCE_QPN_MASK);
		KUNIT_EXPECT_EQ(test, out.psn, SROCE_PSN_MASK);
		if (info->flags & SROCE_HDR_AETH)
			KUNIT_EXPECT_EQ(test, out.msn, SROCE_MSN_MASK);
		if (info->flags & SROCE_HDR_DETH)
			KUNIT_EXPECT_EQ(test, out.sqpn, SROCE_QPN_MASK);
		if (info->flags & SROCE_HDR_FETH) {
			KUNIT_EXPECT_EQ(test, out.flush_type, 0xf);
			KUNIT_EXPECT_EQ(test, out.flush_level, 3);
		}
	}
}

/* ---------------------------------------------------- known packets */

/* The transport headers of a vector: after the IP and UDP headers. */
static const u8 *wire_vec_bth(const struct sroce_icrc_vector *v,
			      unsigned int *len)
{
	unsigned int iphlen = (v->pkt[0] >> 4) == 6 ? 40 : (v->pkt[0] & 0xf) * 4;

	*len = v->len - iphlen - 8;
	return v->pkt + iphlen + 8;
}

static const struct sroce_icrc_vector *wire_vec(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sroce_icrc_vectors); i++)
		if (!strcmp(sroce_icrc_vectors[i].name, name))
			return &sroce_icrc_vectors[i];
	return NULL;
}

/* The fields of each known packet, as tools/testing/icrc_vectors.py built them */
static const struct {
	const char *name;
	struct sroce_pkt pkt;
	u8 pad;
} wire_known[] = {
	{ "scapy_uc_send_only", {
		.opcode = 0x24, .mig = true, .pkey = 0xffff, .dqpn = 211,
		.psn = 13571856, .payload_len = 18 }, 2 },
	{ "ipv4_rc_send_only_pad3", {
		.opcode = 0x04, .se = true, .ack_req = true, .pkey = 0xffff,
		.dqpn = 0x11, .psn = 1, .payload_len = 5 }, 3 },
	{ "ipv4_rc_write_imm", {
		.opcode = 0x0b, .fecn = true, .ack_req = true, .pkey = 0xffff,
		.dqpn = 0x12, .psn = 0xfffffe, .va = 0x00007f0012345678ULL,
		.rkey = 0x1234, .dma_len = 16,
		.imm = cpu_to_be32(0xdeadbeef), .payload_len = 16 }, 0 },
	{ "ipv4_rc_ack", {
		.opcode = 0x11, .pkey = 0xffff, .dqpn = 0x13, .psn = 0x100,
		.syndrome = 0x1f, .msn = 5 }, 0 },
	{ "ipv4_rc_cmp_swap", {
		.opcode = 0x13, .ack_req = true, .pkey = 0xffff, .dqpn = 0x14,
		.psn = 0x200, .va = 0x1000, .rkey = 0xabcd,
		.swap_add = 0x1111111122222222ULL,
		.compare = 0x3333333344444444ULL }, 0 },
	{ "ipv6_ud_send_only", {
		.opcode = 0x64, .pkey = 0xffff, .dqpn = 1, .psn = 0x42,
		.qkey = SROCE_GSI_QKEY, .sqpn = 1, .payload_len = 256 }, 0 },
	{ "ipv6_rc_read_resp_last", {
		.opcode = 0x0f, .becn = true, .pkey = 0xffff, .dqpn = 0x15,
		.psn = 0x123456, .syndrome = 0, .msn = 9,
		.payload_len = 1 }, 3 },
};

/*
 * The known packets parse to their known fields, and building those
 * fields gives the packets' header bytes back.
 */
static void wire_known_packets_test(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wire_known); i++) {
		const struct sroce_icrc_vector *v = wire_vec(wire_known[i].name);
		const struct sroce_pkt *want = &wire_known[i].pkt;
		u8 hdr[SROCE_WIRE_MAX_HDR_LEN];
		struct sroce_pkt got;
		const u8 *bth;
		unsigned int len;
		u8 *buf;

		KUNIT_ASSERT_NOT_NULL(test, v);
		bth = wire_vec_bth(v, &len);
		buf = kmemdup(bth, len, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, buf);
		KUNIT_EXPECT_EQ_MSG(test, sroce_pkt_parse(buf, len, &got), 0,
				    "%s", v->name);
		kfree(buf);
		wire_expect_same(test, want, &got);
		KUNIT_EXPECT_EQ_MSG(test, got.pad, wire_known[i].pad, "%s",
				    v->name);

		KUNIT_EXPECT_EQ(test, sroce_pkt_build(hdr, want), got.hdr_len);
		KUNIT_EXPECT_MEMEQ_MSG(test, hdr, bth, got.hdr_len, "%s",
				       v->name);
	}
}

/* The CNP the ConnectX-4 Lx sent is an opcode sroce does not speak. */
static void wire_known_cnp_test(struct kunit *test)
{
	const struct sroce_icrc_vector *v = wire_vec("cx4_cnp_ipv4");
	struct sroce_pkt pkt;
	unsigned int len;
	const u8 *bth;

	KUNIT_ASSERT_NOT_NULL(test, v);
	bth = wire_vec_bth(v, &len);
	KUNIT_EXPECT_EQ(test, bth[0], 0x81);
	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(bth, len, &pkt), -EOPNOTSUPP);
}

/* ---------------------------------------------------- malformed input */

/* A valid packet of @op with @plen bytes of payload, kmalloc()ed. */
static u8 *wire_make(struct kunit *test, u8 op, u32 plen, unsigned int *len)
{
	struct sroce_pkt in;
	unsigned int hlen;
	u8 *buf;

	wire_fill(&in, op, 7);
	in.payload_len = plen;
	*len = sroce_opcode(op)->hdr_len + plen + sroce_pad(plen) +
	       SROCE_ICRC_LEN;
	buf = kunit_kzalloc(test, *len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	hlen = sroce_pkt_build(buf, &in);
	memset(buf + hlen, 0xa5, plen);
	return buf;
}

/* Parse the first @len bytes of @pkt from a buffer of exactly @len bytes. */
static int wire_parse_exact(const u8 *pkt, unsigned int len,
			    struct sroce_pkt *out)
{
	u8 *buf = kmemdup(pkt, len, GFP_KERNEL);
	int err;

	if (!buf && len)
		return -ENOMEM;
	err = sroce_pkt_parse(buf ? buf : pkt, len, out);
	kfree(buf);
	return err;
}

/*
 * Truncated at every length: shorter than BTH and ICRC, or than the
 * opcode's headers and ICRC, or not a multiple of 4, is -EINVAL; what
 * parses is self-consistent.  Exact-size buffers let KASAN see an
 * over-read.
 */
static void wire_truncated_test(struct kunit *test)
{
	unsigned int op, cut;

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = sroce_opcode(op);
		struct sroce_pkt out;
		unsigned int len;
		u32 plen;
		u8 *pkt;

		if (!info)
			continue;
		plen = (info->flags & SROCE_F_ATOMIC_WRITE) ? 8 :
		       (info->flags & SROCE_F_PAYLOAD) ? 12 : 0;
		pkt = wire_make(test, op, plen, &len);
		KUNIT_ASSERT_EQ(test, wire_parse_exact(pkt, len, &out), 0);
		for (cut = 0; cut < len; cut++) {
			int err = wire_parse_exact(pkt, cut, &out);

			if (cut < info->hdr_len + SROCE_ICRC_LEN || cut % 4) {
				KUNIT_EXPECT_EQ_MSG(test, err, -EINVAL,
						    "%s cut to %u", info->name,
						    cut);
				continue;
			}
			/* shorter but well formed: a shorter payload */
			if (!err)
				KUNIT_EXPECT_EQ(test, out.hdr_len +
						out.payload_len + out.pad +
						SROCE_ICRC_LEN, cut);
			else
				KUNIT_EXPECT_EQ(test, err, -EINVAL);
		}
		kunit_kfree(test, pkt);
	}
}

/* Every nonzero TVer is -EPROTO, for every supported opcode. */
static void wire_bad_tver_test(struct kunit *test)
{
	unsigned int op, tver;

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = sroce_opcode(op);
		struct sroce_pkt out;
		unsigned int len;
		u8 *pkt;

		if (!info)
			continue;
		pkt = wire_make(test, op,
				(info->flags & SROCE_F_ATOMIC_WRITE) ? 8 : 0,
				&len);
		for (tver = 1; tver <= SROCE_BTH_TVER; tver++) {
			pkt[1] = (pkt[1] & ~SROCE_BTH_TVER) | tver;
			KUNIT_EXPECT_EQ_MSG(test,
					    wire_parse_exact(pkt, len, &out),
					    -EPROTO, "%s TVer %u", info->name,
					    tver);
		}
		kunit_kfree(test, pkt);
	}
}

/*
 * Every opcode sroce does not support (RD, CNP, reserved, and the RC
 * opcodes IBTA leaves reserved) is -EOPNOTSUPP at any length that holds
 * a BTH and an ICRC, and -EINVAL below that.
 */
static void wire_unknown_opcode_test(struct kunit *test)
{
	unsigned int op, len, unsupported = 0;
	struct sroce_pkt out;
	u8 *pkt;

	pkt = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pkt);
	for (op = 0; op < 256; op++) {
		if (sroce_opcode(op))
			continue;
		unsupported++;
		pkt[0] = op;
		for (len = 0; len <= 64; len += 4)
			KUNIT_EXPECT_EQ_MSG(test,
					    wire_parse_exact(pkt, len, &out),
					    len < SROCE_BTH_LEN + SROCE_ICRC_LEN ?
					    -EINVAL : -EOPNOTSUPP,
					    "opcode 0x%02x len %u", op, len);
	}
	KUNIT_EXPECT_EQ(test, unsupported,
			256 - ARRAY_SIZE(wire_ibta_opcodes) - WIRE_NR_UC);
	/* a few that must be among them */
	KUNIT_EXPECT_NULL(test, sroce_opcode(0x15));	/* RC reserved */
	KUNIT_EXPECT_NULL(test, sroce_opcode(0x2c));	/* UC READ REQUEST */
	KUNIT_EXPECT_NULL(test, sroce_opcode(0x40));	/* RD */
	KUNIT_EXPECT_NULL(test, sroce_opcode(0x66));	/* UD reserved */
	KUNIT_EXPECT_NULL(test, sroce_opcode(0x81));	/* CNP */
	KUNIT_EXPECT_NULL(test, sroce_opcode(0xff));
}

/*
 * Parse a packet of @op made of its headers (from build, with PadCnt
 * @pad forced), @room bytes after them and the ICRC.
 */
static int wire_parse_room(struct kunit *test, u8 op, u32 room, u8 pad,
			   struct sroce_pkt *out)
{
	const struct sroce_opcode_info *info = sroce_opcode(op);
	struct sroce_pkt in;
	unsigned int len = info->hdr_len + room + SROCE_ICRC_LEN;
	u8 *buf;
	int err;

	wire_fill(&in, op, 3);
	buf = kzalloc(max_t(unsigned int, len, SROCE_WIRE_MAX_HDR_LEN),
		      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	sroce_pkt_build(buf, &in);
	buf[1] = (buf[1] & ~SROCE_BTH_PAD) | pad << SROCE_BTH_PAD_SHIFT;
	err = wire_parse_exact(buf, len, out);
	kfree(buf);
	return err;
}

/*
 * The pad and payload rules, for each opcode class: none where the
 * opcode carries none, never empty and never padded before the last
 * packet, a pad never larger than what follows the headers.
 */
static void wire_pad_payload_test(struct kunit *test)
{
	unsigned int op, room, pad;

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = sroce_opcode(op);
		u32 f;

		if (!info || (info->flags & SROCE_F_ATOMIC_WRITE))
			continue;
		f = info->flags;
		for (room = 0; room <= 12; room += 4) {
			for (pad = 0; pad <= 3; pad++) {
				struct sroce_pkt out;
				int err = wire_parse_room(test, op, room, pad,
							  &out);
				bool ok;

				if (!(f & SROCE_F_PAYLOAD))
					ok = !room && !pad;
				else if (room < pad)
					ok = false;
				else if ((f & SROCE_F_ONLY) == SROCE_F_ONLY)
					ok = true;
				else if (room == pad)	/* empty */
					ok = false;
				else
					ok = (f & SROCE_F_LAST) || !pad;
				KUNIT_EXPECT_EQ_MSG(test, err, ok ? 0 : -EINVAL,
						    "%s room %u pad %u",
						    info->name, room, pad);
				if (!err) {
					KUNIT_EXPECT_EQ(test, out.pad, pad);
					KUNIT_EXPECT_EQ(test, out.payload_len,
							room - pad);
				}
			}
		}
	}
}

/* ATOMIC WRITE carries exactly 8 bytes, unpadded. */
static void wire_atomic_write_len_test(struct kunit *test)
{
	u8 op = SROCE_OPCODE(RC, ATOMIC_WRITE);
	unsigned int room, pad;

	for (room = 0; room <= 24; room += 4) {
		for (pad = 0; pad <= 3; pad++) {
			struct sroce_pkt out;
			int err = wire_parse_room(test, op, room, pad, &out);

			KUNIT_EXPECT_EQ_MSG(test, err,
					    room == 8 && !pad ? 0 : -EINVAL,
					    "room %u pad %u", room, pad);
			if (!err)
				KUNIT_EXPECT_EQ(test, out.payload_len, 8);
		}
	}
}

/*
 * FETH: the placement type is a mask of global visibility and
 * persistence, at least one of them; selectivity is range (0) or MR (1).
 * A FLUSH's headers, built: the FETH right after the BTH, type in bits
 * 3-0 and level in bits 5-4, then the RETH; and parsed back.
 */
static void wire_feth_test(struct kunit *test)
{
	static const u8 want[] = {
		0x1c, 0x00, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,				/* BTH */
		0x00, 0x00, 0x00, 0x12,				/* FETH */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x10, 0x00,	/* RETH */
	};
	struct sroce_pkt in = {
		.opcode = SROCE_OPCODE(RC, FLUSH), .pkey = 0xffff,
		.dqpn = 0x123456, .psn = 0xabcdef, .ack_req = true,
		.flush_type = SROCE_FLUSH_PERSISTENT, .flush_level = SROCE_FLUSH_MR,
		.va = 0x0102030405060708ULL, .rkey = 0x11223344, .dma_len = 4096,
	}, out;
	u8 buf[SROCE_WIRE_MAX_HDR_LEN + SROCE_ICRC_LEN] = {};
	unsigned int t, l;

	for (t = 0; t < 16; t++)
		for (l = 0; l < 4; l++)
			KUNIT_EXPECT_EQ_MSG(test, sroce_feth_ok(t, l),
					    t >= 1 && t <= 3 && l <= 1,
					    "type %u level %u", t, l);

	KUNIT_ASSERT_EQ(test, sroce_pkt_build(buf, &in), sizeof(want));
	KUNIT_EXPECT_MEMEQ(test, buf, want, sizeof(want));
	KUNIT_ASSERT_EQ(test, sroce_pkt_parse(buf, sizeof(want) + SROCE_ICRC_LEN,
					      &out), 0);
	KUNIT_EXPECT_EQ(test, out.flush_type, SROCE_FLUSH_PERSISTENT);
	KUNIT_EXPECT_EQ(test, out.flush_level, SROCE_FLUSH_MR);
	KUNIT_EXPECT_EQ(test, out.va, in.va);
	KUNIT_EXPECT_EQ(test, out.rkey, in.rkey);
	KUNIT_EXPECT_EQ(test, out.dma_len, in.dma_len);
	KUNIT_EXPECT_EQ(test, out.payload_len, 0);
}

/* ------------------------------------------------------------- PSNs */

static int wire_sign(int x)
{
	return (x > 0) - (x < 0);
}

/*
 * PSN compare: equal is 0; a PSN 1 .. 2^23 - 1 ahead is after, and as
 * far behind is before, from every starting point tried, across the wrap;
 * the bits above 24 are ignored.
 */
static void wire_psn_cmp_test(struct kunit *test)
{
	static const u32 bases[] = {
		0, 1, 0x7fffff, 0x800000, 0xfffffe, 0xffffff, 0x123456,
	};
	static const u32 dists[] = {
		1, 2, 3, 0x100, 0xffff, 0x10000, 0x7ffffe, 0x7fffff,
	};
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		u32 a = bases[i];

		KUNIT_EXPECT_EQ(test, sroce_psn_cmp(a, a), 0);
		KUNIT_EXPECT_EQ(test, sroce_psn_cmp(a | 0xff000000, a), 0);
		KUNIT_EXPECT_EQ(test, sroce_psn_cmp(a, a | 0x5a000000), 0);
		for (j = 0; j < ARRAY_SIZE(dists); j++) {
			u32 b = sroce_psn_add(a, dists[j]);

			KUNIT_EXPECT_LT_MSG(test, sroce_psn_cmp(a, b), 0,
					    "0x%06x vs 0x%06x", a, b);
			KUNIT_EXPECT_GT_MSG(test, sroce_psn_cmp(b, a), 0,
					    "0x%06x vs 0x%06x", b, a);
			/* garbage above bit 23 changes nothing */
			KUNIT_EXPECT_LT(test, sroce_psn_cmp(a | 0x80000000,
							    b | 0x7f000000), 0);
		}
	}
	/* the wrap itself */
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(0, 0xffffff), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0xffffff, 0), 0);
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(5, 0xfffffa), 0);
	/*
	 * Exactly half the circle apart, each PSN is "before" the other:
	 * the split has to go somewhere.  Callers keep windows far smaller.
	 */
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0, 0x800000), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0x800000, 0), 0);
}

/* Compare is antisymmetric everywhere but at half the circle. */
static void wire_psn_antisymmetry_test(struct kunit *test)
{
	u32 a, d;

	for (a = 0; a < 0x1000000; a += 0x0b0b0b) {
		for (d = 0; d < 0x1000000; d += 0x0d0d0d) {
			u32 b = sroce_psn_add(a, d);

			if (d == 0x800000)
				continue;
			KUNIT_EXPECT_EQ(test, wire_sign(sroce_psn_cmp(a, b)),
					-wire_sign(sroce_psn_cmp(b, a)));
			KUNIT_EXPECT_EQ(test, sroce_psn_cmp(a, b) < 0,
					d != 0 && d < 0x800000);
		}
	}
}

/* PSN add is modulo 2^24, for any n, negative ones included. */
static void wire_psn_add_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0, 1), 1);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xffffff, 1), 0);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xfffffe, 5), 3);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0, -1), 0xffffff);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(3, -5), 0xfffffe);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0x123456, 0x1000000), 0x123456);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0x123456, 0xffffffff), 0x123455);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xff000010, 0), 0x10);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xffffffff, 0xffffffff), 0xfffffe);
}

/*
 * Windows as the responder and completer use them: first <= psn <= last
 * with last = first + n - 1, across the wrap, and the PSN after a message
 * is last + 1.
 */
static void wire_psn_window_test(struct kunit *test)
{
	static const u32 firsts[] = { 0, 0xfffff0, 0xffffff, 0x7ffff8 };
	static const u32 npkts[] = { 1, 2, 16, 17, 4096 };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(firsts); i++) {
		for (j = 0; j < ARRAY_SIZE(npkts); j++) {
			u32 first = firsts[i];
			u32 last = sroce_psn_add(first, npkts[j] - 1);
			u32 next = sroce_psn_add(last, 1);
			int k;

			KUNIT_EXPECT_EQ(test, sroce_psn_add(first, npkts[j]),
					next);
			for (k = -3; k < (int)npkts[j] + 3; k++) {
				u32 psn = sroce_psn_add(first, k);
				bool in = sroce_psn_cmp(psn, first) >= 0 &&
					  sroce_psn_cmp(psn, last) <= 0;

				KUNIT_EXPECT_EQ_MSG(test, in,
						    k >= 0 && k < (int)npkts[j],
						    "first 0x%06x n %u k %d",
						    first, npkts[j], k);
			}
			KUNIT_EXPECT_GT(test, sroce_psn_cmp(next, last), 0);
		}
	}
}

/* ------------------------------------------------------------- AETH */

/* ACK and RNR NAK syndromes encode and decode their 5-bit values. */
static void wire_aeth_ack_rnr_test(struct kunit *test)
{
	unsigned int v;

	for (v = 0; v < 32; v++) {
		u8 ack = sroce_aeth_ack(v), rnr = sroce_aeth_rnr_nak(v);

		KUNIT_EXPECT_EQ(test, ack, v);
		KUNIT_EXPECT_EQ(test, sroce_aeth_type(ack), SROCE_AETH_ACK);
		KUNIT_EXPECT_EQ(test, sroce_aeth_value(ack), v);
		KUNIT_EXPECT_EQ(test, rnr, 0x20 | v);
		KUNIT_EXPECT_EQ(test, sroce_aeth_type(rnr), SROCE_AETH_RNR_NAK);
		KUNIT_EXPECT_EQ(test, sroce_aeth_value(rnr), v);
		/* bits above the 5-bit field do not leak into the type */
		KUNIT_EXPECT_EQ(test, sroce_aeth_ack(v | 0xe0), ack);
		KUNIT_EXPECT_EQ(test, sroce_aeth_rnr_nak(v | 0xe0), rnr);
	}
	KUNIT_EXPECT_EQ(test, sroce_aeth_ack(SROCE_AETH_CREDITS_INVALID), 0x1f);
}

/*
 * NAK codes (IBTA table 42): PSN sequence error 0, invalid request 1,
 * remote access error 2, remote operational error 3, invalid RD request
 * 4; type 2 is reserved; bit 7 does not change the type.
 */
static void wire_aeth_nak_test(struct kunit *test)
{
	static const u8 naks[] = {
		SROCE_NAK_PSN_SEQ_ERR, SROCE_NAK_INVALID_REQ,
		SROCE_NAK_REMOTE_ACCESS_ERR, SROCE_NAK_REMOTE_OP_ERR,
		SROCE_NAK_INVALID_RD_REQ,
	};
	unsigned int i, s;

	for (i = 0; i < ARRAY_SIZE(naks); i++) {
		KUNIT_EXPECT_EQ(test, sroce_aeth_type(naks[i]), SROCE_AETH_NAK);
		KUNIT_EXPECT_EQ(test, sroce_aeth_value(naks[i]), i);
	}
	for (s = 0; s < 256; s++) {
		KUNIT_EXPECT_EQ(test, sroce_aeth_type(s), (s >> 5) & 3);
		KUNIT_EXPECT_EQ(test, sroce_aeth_value(s), s & 0x1f);
		KUNIT_EXPECT_EQ(test, sroce_aeth_type(s | 0x80),
				sroce_aeth_type(s));
	}
	KUNIT_EXPECT_EQ(test, sroce_aeth_type(0x40), SROCE_AETH_RESERVED);
}

/* Every syndrome and MSNs across 24 bits cross the wire in an ACK. */
static void wire_aeth_wire_test(struct kunit *test)
{
	static const u32 msns[] = { 0, 1, 0x7fffff, 0xffffff, 0x1000000 };
	struct sroce_pkt in, out;
	unsigned int s, i;

	for (s = 0; s < 256; s++) {
		for (i = 0; i < ARRAY_SIZE(msns); i++) {
			memset(&in, 0, sizeof(in));
			in.opcode = SROCE_OPCODE(RC, ACKNOWLEDGE);
			in.syndrome = s;
			in.msn = msns[i];
			KUNIT_ASSERT_EQ(test,
					wire_build_parse(test, &in, &out, NULL),
					0);
			KUNIT_EXPECT_EQ(test, out.syndrome, s);
			KUNIT_EXPECT_EQ(test, out.msn, msns[i] & SROCE_MSN_MASK);
		}
	}
}

static struct kunit_case sroce_wire_cases[] = {
	KUNIT_CASE(wire_opcode_table_test),
	KUNIT_CASE(wire_roundtrip_test),
	KUNIT_CASE(wire_build_masks_test),
	KUNIT_CASE(wire_known_packets_test),
	KUNIT_CASE(wire_known_cnp_test),
	KUNIT_CASE(wire_truncated_test),
	KUNIT_CASE(wire_bad_tver_test),
	KUNIT_CASE(wire_unknown_opcode_test),
	KUNIT_CASE(wire_pad_payload_test),
	KUNIT_CASE(wire_atomic_write_len_test),
	KUNIT_CASE(wire_feth_test),
	KUNIT_CASE(wire_psn_cmp_test),
	KUNIT_CASE(wire_psn_antisymmetry_test),
	KUNIT_CASE(wire_psn_add_test),
	KUNIT_CASE(wire_psn_window_test),
	KUNIT_CASE(wire_aeth_ack_rnr_test),
	KUNIT_CASE(wire_aeth_nak_test),
	KUNIT_CASE(wire_aeth_wire_test),
	{}
};

static struct kunit_suite sroce_wire_suite = {
	.name = "sroce_wire",
	.test_cases = sroce_wire_cases,
};

kunit_test_suites(&sroce_wire_suite);

MODULE_DESCRIPTION("KUnit tests for the sroce RoCEv2 driver");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
