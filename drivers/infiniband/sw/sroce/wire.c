// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce: the opcode table, and decoding and encoding of the transport
 * headers (BTH and its extension headers).  See wire.h for the layouts.
 *
 * The header structs are __packed (see wire.h), so plain field accesses
 * are safe at any alignment.
 */
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#include <kunit/visibility.h>

#include "wire.h"

/* One table entry: the transport flag comes from the opcode's transport */
#define OPC(tr, op, fl, len)					\
	[SROCE_OPCODE(tr, op)] = {				\
		.name = #tr "_" #op,				\
		.flags = SROCE_F_##tr | (fl),			\
		.hdr_len = (len),				\
	}

#define REQ_SEND	(SROCE_F_REQ | SROCE_F_SEND | SROCE_F_PAYLOAD)
#define REQ_WRITE	(SROCE_F_REQ | SROCE_F_WRITE | SROCE_F_PAYLOAD)
#define RESP_READ	(SROCE_F_RESP | SROCE_F_READ_RESP | SROCE_F_PAYLOAD)

#define BTH		SROCE_BTH_LEN
#define WITH_IMM	(SROCE_HDR_IMMDT)
#define WITH_INV	(SROCE_HDR_IETH)
#define WITH_RETH	(SROCE_HDR_RETH)
#define WITH_AETH	(SROCE_HDR_AETH)

/*
 * The opcodes sroce speaks.  @hdr_len is spelled out rather than derived
 * from the header flags so that the table reads like the IBTA one; the
 * unit tests check that the two agree.  Entries left zero (RD, CNP,
 * reserved opcodes) are unsupported.
 */
static const struct sroce_opcode_info sroce_opcodes[256] = {
	OPC(RC, SEND_FIRST, REQ_SEND | SROCE_F_FIRST, BTH),
	OPC(RC, SEND_MIDDLE, REQ_SEND | SROCE_F_MIDDLE, BTH),
	OPC(RC, SEND_LAST, REQ_SEND | SROCE_F_LAST, BTH),
	OPC(RC, SEND_LAST_WITH_IMMEDIATE, REQ_SEND | SROCE_F_LAST | WITH_IMM,
	    BTH + SROCE_IMMDT_LEN),
	OPC(RC, SEND_ONLY, REQ_SEND | SROCE_F_ONLY, BTH),
	OPC(RC, SEND_ONLY_WITH_IMMEDIATE, REQ_SEND | SROCE_F_ONLY | WITH_IMM,
	    BTH + SROCE_IMMDT_LEN),
	OPC(RC, RDMA_WRITE_FIRST, REQ_WRITE | SROCE_F_FIRST | WITH_RETH,
	    BTH + SROCE_RETH_LEN),
	OPC(RC, RDMA_WRITE_MIDDLE, REQ_WRITE | SROCE_F_MIDDLE, BTH),
	OPC(RC, RDMA_WRITE_LAST, REQ_WRITE | SROCE_F_LAST, BTH),
	OPC(RC, RDMA_WRITE_LAST_WITH_IMMEDIATE,
	    REQ_WRITE | SROCE_F_LAST | WITH_IMM, BTH + SROCE_IMMDT_LEN),
	OPC(RC, RDMA_WRITE_ONLY, REQ_WRITE | SROCE_F_ONLY | WITH_RETH,
	    BTH + SROCE_RETH_LEN),
	OPC(RC, RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	    REQ_WRITE | SROCE_F_ONLY | WITH_RETH | WITH_IMM,
	    BTH + SROCE_RETH_LEN + SROCE_IMMDT_LEN),
	OPC(RC, RDMA_READ_REQUEST,
	    SROCE_F_REQ | SROCE_F_READ_REQ | SROCE_F_ONLY | WITH_RETH,
	    BTH + SROCE_RETH_LEN),
	OPC(RC, RDMA_READ_RESPONSE_FIRST, RESP_READ | SROCE_F_FIRST | WITH_AETH,
	    BTH + SROCE_AETH_LEN),
	OPC(RC, RDMA_READ_RESPONSE_MIDDLE, RESP_READ | SROCE_F_MIDDLE, BTH),
	OPC(RC, RDMA_READ_RESPONSE_LAST, RESP_READ | SROCE_F_LAST | WITH_AETH,
	    BTH + SROCE_AETH_LEN),
	OPC(RC, RDMA_READ_RESPONSE_ONLY, RESP_READ | SROCE_F_ONLY | WITH_AETH,
	    BTH + SROCE_AETH_LEN),
	OPC(RC, ACKNOWLEDGE,
	    SROCE_F_RESP | SROCE_F_ACK | SROCE_F_ONLY | WITH_AETH,
	    BTH + SROCE_AETH_LEN),
	OPC(RC, ATOMIC_ACKNOWLEDGE,
	    SROCE_F_RESP | SROCE_F_ATOMIC_ACK | SROCE_F_ONLY | WITH_AETH |
	    SROCE_HDR_ATMACK,
	    BTH + SROCE_AETH_LEN + SROCE_ATMACK_LEN),
	OPC(RC, COMPARE_SWAP,
	    SROCE_F_REQ | SROCE_F_ATOMIC | SROCE_F_ONLY | SROCE_HDR_ATMETH,
	    BTH + SROCE_ATMETH_LEN),
	OPC(RC, FETCH_ADD,
	    SROCE_F_REQ | SROCE_F_ATOMIC | SROCE_F_ONLY | SROCE_HDR_ATMETH,
	    BTH + SROCE_ATMETH_LEN),
	OPC(RC, SEND_LAST_WITH_INVALIDATE, REQ_SEND | SROCE_F_LAST | WITH_INV,
	    BTH + SROCE_IETH_LEN),
	OPC(RC, SEND_ONLY_WITH_INVALIDATE, REQ_SEND | SROCE_F_ONLY | WITH_INV,
	    BTH + SROCE_IETH_LEN),
	OPC(RC, FLUSH,
	    SROCE_F_REQ | SROCE_F_FLUSH | SROCE_F_ONLY | SROCE_HDR_FETH |
	    WITH_RETH,
	    BTH + SROCE_FETH_LEN + SROCE_RETH_LEN),
	OPC(RC, ATOMIC_WRITE,
	    SROCE_F_REQ | SROCE_F_ATOMIC_WRITE | SROCE_F_PAYLOAD |
	    SROCE_F_ONLY | WITH_RETH,
	    BTH + SROCE_RETH_LEN),

	OPC(UC, SEND_FIRST, REQ_SEND | SROCE_F_FIRST, BTH),
	OPC(UC, SEND_MIDDLE, REQ_SEND | SROCE_F_MIDDLE, BTH),
	OPC(UC, SEND_LAST, REQ_SEND | SROCE_F_LAST, BTH),
	OPC(UC, SEND_LAST_WITH_IMMEDIATE, REQ_SEND | SROCE_F_LAST | WITH_IMM,
	    BTH + SROCE_IMMDT_LEN),
	OPC(UC, SEND_ONLY, REQ_SEND | SROCE_F_ONLY, BTH),
	OPC(UC, SEND_ONLY_WITH_IMMEDIATE, REQ_SEND | SROCE_F_ONLY | WITH_IMM,
	    BTH + SROCE_IMMDT_LEN),
	OPC(UC, RDMA_WRITE_FIRST, REQ_WRITE | SROCE_F_FIRST | WITH_RETH,
	    BTH + SROCE_RETH_LEN),
	OPC(UC, RDMA_WRITE_MIDDLE, REQ_WRITE | SROCE_F_MIDDLE, BTH),
	OPC(UC, RDMA_WRITE_LAST, REQ_WRITE | SROCE_F_LAST, BTH),
	OPC(UC, RDMA_WRITE_LAST_WITH_IMMEDIATE,
	    REQ_WRITE | SROCE_F_LAST | WITH_IMM, BTH + SROCE_IMMDT_LEN),
	OPC(UC, RDMA_WRITE_ONLY, REQ_WRITE | SROCE_F_ONLY | WITH_RETH,
	    BTH + SROCE_RETH_LEN),
	OPC(UC, RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	    REQ_WRITE | SROCE_F_ONLY | WITH_RETH | WITH_IMM,
	    BTH + SROCE_RETH_LEN + SROCE_IMMDT_LEN),

	OPC(UD, SEND_ONLY, REQ_SEND | SROCE_F_ONLY | SROCE_HDR_DETH,
	    BTH + SROCE_DETH_LEN),
	OPC(UD, SEND_ONLY_WITH_IMMEDIATE,
	    REQ_SEND | SROCE_F_ONLY | SROCE_HDR_DETH | WITH_IMM,
	    BTH + SROCE_DETH_LEN + SROCE_IMMDT_LEN),
};

/**
 * sroce_opcode() - look up a BTH opcode
 * @opcode: the BTH opcode
 *
 * Return: the opcode's description, or NULL if sroce does not support it
 * (RD, CNP and reserved opcodes).
 */
const struct sroce_opcode_info *sroce_opcode(u8 opcode)
{
	const struct sroce_opcode_info *info = &sroce_opcodes[opcode];

	return info->name ? info : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_opcode);

/*
 * The payload rules that depend on the opcode alone (the QP checks the
 * path MTU): no payload and no pad where the opcode carries none; the
 * packets of a multi-packet message are never empty, and only the last
 * one may be padded; ATOMIC WRITE carries exactly 8 bytes.
 */
static bool sroce_payload_ok(u32 flags, u32 payload_len, u8 pad)
{
	if (!(flags & SROCE_F_PAYLOAD))
		return !payload_len && !pad;
	if (flags & SROCE_F_ATOMIC_WRITE)
		return payload_len == SROCE_ATOMIC_WRITE_LEN;
	if ((flags & SROCE_F_ONLY) == SROCE_F_ONLY)
		return true;
	if (!payload_len)
		return false;
	return (flags & SROCE_F_LAST) || !pad;
}

/**
 * sroce_pkt_parse() - decode and validate the transport headers
 * @bth: the BTH, right after the UDP header
 * @len: bytes from the BTH to the end of the UDP payload, including the
 *	 4-byte ICRC; nothing beyond is read
 * @pkt: filled in on success; fields of absent headers are zeroed
 *
 * Checks what can be checked without the QP: the opcode is supported,
 * TVer is 0, the length is a multiple of 4 (payload plus pad are), it
 * covers the headers, pad and ICRC, and the payload follows the opcode's
 * rules (see sroce_payload_ok()).  Reserved fields are ignored, as IBTA
 * requires of receivers.  The ICRC is not checked here.
 *
 * Return: 0 on success; -EOPNOTSUPP for an unsupported opcode; -EPROTO
 * for a nonzero TVer; -EINVAL for a packet whose lengths are wrong.
 */
int sroce_pkt_parse(const void *bth, unsigned int len, struct sroce_pkt *pkt)
{
	const struct sroce_opcode_info *info;
	const struct sroce_bth *h = bth;
	const u8 *p = bth;
	u32 qpn, apsn, room;
	u8 pad;

	if (len < SROCE_BTH_LEN + SROCE_ICRC_LEN)
		return -EINVAL;
	info = sroce_opcode(h->opcode);
	if (!info)
		return -EOPNOTSUPP;
	if (h->flags & SROCE_BTH_TVER)
		return -EPROTO;
	if (len % 4 || len < info->hdr_len + SROCE_ICRC_LEN)
		return -EINVAL;

	pad = (h->flags & SROCE_BTH_PAD) >> SROCE_BTH_PAD_SHIFT;
	room = len - info->hdr_len - SROCE_ICRC_LEN;
	if (room < pad || !sroce_payload_ok(info->flags, room - pad, pad))
		return -EINVAL;

	memset(pkt, 0, sizeof(*pkt));
	qpn = be32_to_cpu(h->qpn);
	apsn = be32_to_cpu(h->apsn);
	pkt->opcode = h->opcode;
	pkt->se = h->flags & SROCE_BTH_SE;
	pkt->mig = h->flags & SROCE_BTH_MIG;
	pkt->pad = pad;
	pkt->pkey = be16_to_cpu(h->pkey);
	pkt->fecn = qpn & SROCE_BTH_FECN;
	pkt->becn = qpn & SROCE_BTH_BECN;
	pkt->dqpn = qpn & SROCE_QPN_MASK;
	pkt->ack_req = apsn & SROCE_BTH_ACKREQ;
	pkt->psn = apsn & SROCE_PSN_MASK;
	pkt->flags = info->flags;
	pkt->hdr_len = info->hdr_len;
	pkt->payload_len = room - pad;
	p += SROCE_BTH_LEN;

	if (info->flags & SROCE_HDR_DETH) {
		const struct sroce_deth *deth = (const void *)p;

		pkt->qkey = be32_to_cpu(deth->qkey);
		pkt->sqpn = be32_to_cpu(deth->sqpn) & SROCE_QPN_MASK;
		p += sizeof(*deth);
	}
	if (info->flags & SROCE_HDR_FETH) {
		const struct sroce_feth *feth = (const void *)p;
		u32 bits = be32_to_cpu(feth->bits);

		pkt->flush_type = bits & SROCE_FETH_TYPE;
		pkt->flush_level = (bits & SROCE_FETH_LEVEL) >>
				   SROCE_FETH_LEVEL_SHIFT;
		p += sizeof(*feth);
	}
	if (info->flags & SROCE_HDR_RETH) {
		const struct sroce_reth *reth = (const void *)p;

		pkt->va = be64_to_cpu(reth->va);
		pkt->rkey = be32_to_cpu(reth->rkey);
		pkt->dma_len = be32_to_cpu(reth->len);
		p += sizeof(*reth);
	}
	if (info->flags & SROCE_HDR_ATMETH) {
		const struct sroce_atmeth *atmeth = (const void *)p;

		pkt->va = be64_to_cpu(atmeth->va);
		pkt->rkey = be32_to_cpu(atmeth->rkey);
		pkt->swap_add = be64_to_cpu(atmeth->swap_add);
		pkt->compare = be64_to_cpu(atmeth->compare);
		p += sizeof(*atmeth);
	}
	if (info->flags & SROCE_HDR_AETH) {
		const struct sroce_aeth *aeth = (const void *)p;
		u32 smsn = be32_to_cpu(aeth->smsn);

		pkt->syndrome = smsn >> 24;
		pkt->msn = smsn & SROCE_MSN_MASK;
		p += sizeof(*aeth);
	}
	if (info->flags & SROCE_HDR_ATMACK) {
		const struct sroce_atmack *atmack = (const void *)p;

		pkt->atomic_orig = be64_to_cpu(atmack->orig);
		p += sizeof(*atmack);
	}
	if (info->flags & SROCE_HDR_IMMDT) {
		const struct sroce_immdt *immdt = (const void *)p;

		pkt->imm = immdt->imm;
		p += sizeof(*immdt);
	}
	if (info->flags & SROCE_HDR_IETH) {
		const struct sroce_ieth *ieth = (const void *)p;

		pkt->inv_rkey = be32_to_cpu(ieth->rkey);
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_pkt_parse);

/**
 * sroce_pkt_build() - encode the transport headers
 * @buf: where the BTH goes; room for SROCE_WIRE_MAX_HDR_LEN bytes
 * @pkt: the packet; which fields are used depends on @pkt->opcode
 *
 * Writes the BTH and the extension headers @pkt->opcode carries, with
 * TVer and the reserved fields zero.  PadCnt is computed from
 * @pkt->payload_len (@pkt->pad, @pkt->flags and @pkt->hdr_len are not
 * read).  The caller appends the payload, the pad bytes (zero) and the
 * ICRC.
 *
 * Return: bytes written, the payload offset; 0 if the opcode is not
 * supported, which is a bug in the caller.
 */
unsigned int sroce_pkt_build(void *buf, const struct sroce_pkt *pkt)
{
	const struct sroce_opcode_info *info = sroce_opcode(pkt->opcode);
	struct sroce_bth *h = buf;
	u8 *p = buf;
	u32 qpn, apsn;

	if (WARN_ON_ONCE(!info))
		return 0;

	qpn = pkt->dqpn & SROCE_QPN_MASK;
	if (pkt->fecn)
		qpn |= SROCE_BTH_FECN;
	if (pkt->becn)
		qpn |= SROCE_BTH_BECN;
	apsn = pkt->psn & SROCE_PSN_MASK;
	if (pkt->ack_req)
		apsn |= SROCE_BTH_ACKREQ;

	h->opcode = pkt->opcode;
	h->flags = sroce_pad(pkt->payload_len) << SROCE_BTH_PAD_SHIFT;
	if (pkt->se)
		h->flags |= SROCE_BTH_SE;
	if (pkt->mig)
		h->flags |= SROCE_BTH_MIG;
	h->pkey = cpu_to_be16(pkt->pkey);
	h->qpn = cpu_to_be32(qpn);
	h->apsn = cpu_to_be32(apsn);
	p += SROCE_BTH_LEN;

	if (info->flags & SROCE_HDR_DETH) {
		struct sroce_deth *deth = (void *)p;

		deth->qkey = cpu_to_be32(pkt->qkey);
		deth->sqpn = cpu_to_be32(pkt->sqpn & SROCE_QPN_MASK);
		p += sizeof(*deth);
	}
	if (info->flags & SROCE_HDR_FETH) {
		struct sroce_feth *feth = (void *)p;
		u32 bits = pkt->flush_type & SROCE_FETH_TYPE;

		bits |= (pkt->flush_level << SROCE_FETH_LEVEL_SHIFT) &
			SROCE_FETH_LEVEL;
		feth->bits = cpu_to_be32(bits);
		p += sizeof(*feth);
	}
	if (info->flags & SROCE_HDR_RETH) {
		struct sroce_reth *reth = (void *)p;

		reth->va = cpu_to_be64(pkt->va);
		reth->rkey = cpu_to_be32(pkt->rkey);
		reth->len = cpu_to_be32(pkt->dma_len);
		p += sizeof(*reth);
	}
	if (info->flags & SROCE_HDR_ATMETH) {
		struct sroce_atmeth *atmeth = (void *)p;

		atmeth->va = cpu_to_be64(pkt->va);
		atmeth->rkey = cpu_to_be32(pkt->rkey);
		atmeth->swap_add = cpu_to_be64(pkt->swap_add);
		atmeth->compare = cpu_to_be64(pkt->compare);
		p += sizeof(*atmeth);
	}
	if (info->flags & SROCE_HDR_AETH) {
		struct sroce_aeth *aeth = (void *)p;

		aeth->smsn = cpu_to_be32((u32)pkt->syndrome << 24 |
					 (pkt->msn & SROCE_MSN_MASK));
		p += sizeof(*aeth);
	}
	if (info->flags & SROCE_HDR_ATMACK) {
		struct sroce_atmack *atmack = (void *)p;

		atmack->orig = cpu_to_be64(pkt->atomic_orig);
		p += sizeof(*atmack);
	}
	if (info->flags & SROCE_HDR_IMMDT) {
		struct sroce_immdt *immdt = (void *)p;

		immdt->imm = pkt->imm;
		p += sizeof(*immdt);
	}
	if (info->flags & SROCE_HDR_IETH) {
		struct sroce_ieth *ieth = (void *)p;

		ieth->rkey = cpu_to_be32(pkt->inv_rkey);
	}
	return info->hdr_len;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_pkt_build);
