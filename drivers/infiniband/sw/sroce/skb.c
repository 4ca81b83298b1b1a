// SPDX-License-Identifier: GPL-2.0-only
/*
 * Transmit buffers.
 *
 * A packet's linear part holds its headers and, for a small payload, the
 * payload; a larger payload is attached as page frags that point at the
 * memory it comes from (the pages of the MR: zero copy), so sending costs
 * no copy and no payload-sized allocation.  Where memory cannot be shared
 * that way (slab or vmalloc memory of a kernel ULP, or no frag slot left)
 * the rest of the payload is copied into a frag of our own.
 *
 * Buffers are carved from pages that sroce keeps and reuses (a small
 * ring per CPU), not from kmalloc or the stack's page fragment caches:
 * with init_on_alloc, which distributions turn on by default, every new
 * allocation is zeroed first, and for a software device that doubled the
 * cost of a packet.  A page is reused once every buffer carved from it
 * has been freed (only the ring's own reference is left); buffers are
 * freed by whoever frees the skb, as any page fragment (skb_free_frag()).
 *
 * Sharing pages is safe for the memory: each frag holds a page
 * reference, so pages stay allocated until the skb is freed, even if the
 * MR is deregistered meanwhile.  Their contents may change under a
 * packet in flight only if a program changes a buffer it has posted,
 * which IBTA leaves undefined; the ICRC then fails and the packet is
 * resent.  SKBFL_SHARED_FRAG tells the stack so.
 */
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/skbuff.h>

#include "sroce.h"
#include "qp.h"

#define SROCE_ENCAP_LEN		(sizeof(struct ipv6hdr) + sizeof(struct udphdr))
/* Pad (0..3) and ICRC, after the payload. */
#define SROCE_TRAILER_MAX	(3 + SROCE_ICRC_LEN)

/* The pages buffers are carved from: 32 KiB, a ring of them per CPU. */
#define SROCE_FRAG_ORDER	3
#define SROCE_FRAG_RING		16

/**
 * struct sroce_frag_cache - the pages one CPU carves buffers from
 * @ring: pages this cache holds a reference to (NULL: none yet)
 * @cur: the page being carved
 * @offset: its next free byte
 *
 * Used with BHs off, so only its own CPU touches it.
 */
struct sroce_frag_cache {
	struct page *ring[SROCE_FRAG_RING];
	unsigned int cur;
	unsigned int offset;
};

static DEFINE_PER_CPU(struct sroce_frag_cache, sroce_frag_cache);

/*
 * Move to a page with room: one whose buffers have all come back, or a
 * new page in the place of the next one in the ring (whose buffers then
 * free it when they come back).
 */
static bool sroce_frag_refill(struct sroce_frag_cache *fc)
{
	struct page *page;
	unsigned int i, n;

	for (n = 1; n <= SROCE_FRAG_RING; n++) {
		i = (fc->cur + n) % SROCE_FRAG_RING;
		page = fc->ring[i];
		if (page && page_ref_count(page) == 1)
			goto found;
	}
	i = (fc->cur + 1) % SROCE_FRAG_RING;
	page = alloc_pages(GFP_ATOMIC | __GFP_COMP | __GFP_NOWARN |
			   __GFP_NORETRY, SROCE_FRAG_ORDER);
	if (!page)
		page = alloc_page(GFP_ATOMIC | __GFP_NOWARN);
	if (!page)
		return false;
	if (fc->ring[i])
		put_page(fc->ring[i]);
	fc->ring[i] = page;
found:
	fc->cur = i;
	fc->offset = 0;
	return true;
}

/**
 * sroce_frag_alloc - a buffer for part of a packet
 * @size: bytes, at most PAGE_SIZE
 *
 * Free it with skb_free_frag(), or let the skb it is attached to do so.
 * Any context but hard interrupts.
 *
 * Return: the buffer, or NULL without memory.
 */
static void *sroce_frag_alloc(unsigned int size)
{
	struct sroce_frag_cache *fc;
	struct page *page;
	void *buf = NULL;

	size = ALIGN(size, SMP_CACHE_BYTES);
	if (WARN_ON_ONCE(size > PAGE_SIZE))
		return NULL;
	local_bh_disable();
	fc = this_cpu_ptr(&sroce_frag_cache);
	page = fc->ring[fc->cur];
	if (!page || fc->offset + size > page_size(page)) {
		if (!sroce_frag_refill(fc))
			goto out;
		page = fc->ring[fc->cur];
	}
	get_page(page);
	buf = page_address(page) + fc->offset;
	fc->offset += size;
out:
	local_bh_enable();
	return buf;
}

/**
 * sroce_skb_exit - give back the pages of every CPU's cache
 *
 * At module exit, when nothing sends any more.  Buffers still in flight
 * keep their pages until they are freed.
 */
void sroce_skb_exit(void)
{
	unsigned int cpu, i;

	for_each_possible_cpu(cpu) {
		struct sroce_frag_cache *fc = per_cpu_ptr(&sroce_frag_cache, cpu);

		for (i = 0; i < SROCE_FRAG_RING; i++) {
			if (fc->ring[i])
				put_page(fc->ring[i]);
			fc->ring[i] = NULL;
		}
	}
}

/**
 * sroce_tx_alloc - an empty packet
 * @qp: the sending QP (its device's netdev sets the headroom)
 * @len: bytes that go into the linear part: transport headers and a
 *	payload that is copied rather than attached
 *
 * Room is left in front for UDP, IP and the link layer, and behind for
 * the pad and the ICRC.  Any context but hard interrupts.
 *
 * Return: the skb, or NULL without memory.
 */
struct sk_buff *sroce_tx_alloc(struct sroce_qp *qp, unsigned int len)
{
	struct net_device *ndev = sroce_qp_dev(qp)->ndev;
	unsigned int head = LL_RESERVED_SPACE(ndev) + SROCE_ENCAP_LEN;
	unsigned int size = SKB_DATA_ALIGN(head + len + SROCE_TRAILER_MAX) +
			    SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb = NULL;
	void *data;

	if (size <= PAGE_SIZE) {
		data = sroce_frag_alloc(size);
		if (data) {
			skb = build_skb(data, size);
			if (!skb)
				skb_free_frag(data);
		}
	} else {
		skb = alloc_skb(head + len + SROCE_TRAILER_MAX,
				GFP_ATOMIC | __GFP_NOWARN);
	}
	if (!skb)
		return NULL;
	skb_reserve(skb, head);
	return skb;
}

static void sroce_skb_grow(struct sk_buff *skb, unsigned int len)
{
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
}

/**
 * sroce_tx_add_page - attach part of a page as the next frag
 * @skb: the packet
 * @page: the page; a reference is taken
 * @off: where in it
 * @len: how many bytes
 *
 * Two frag slots are always kept: one for a copy of what cannot be
 * attached, one for the trailer.  Any context.
 *
 * Return: false if the page cannot be shared (slab pages, see
 * sendpage_ok()) or no slot is left; nothing is attached then.
 */
bool sroce_tx_add_page(struct sk_buff *skb, struct page *page,
		       unsigned int off, unsigned int len)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	int i = sh->nr_frags;

	if (!sendpage_ok(page))
		return false;
	if (i && skb_can_coalesce(skb, i, page, off)) {
		skb_frag_size_add(&sh->frags[i - 1], len);
	} else {
		if (i >= MAX_SKB_FRAGS - 2)
			return false;
		get_page(page);
		skb_fill_page_desc(skb, i, page, off, len);
	}
	sh->flags |= SKBFL_SHARED_FRAG;
	sroce_skb_grow(skb, len);
	return true;
}

/**
 * sroce_tx_put_frag - append @len bytes of our own memory as a frag
 * @skb: the packet
 * @len: at most PAGE_SIZE
 *
 * Any context but hard interrupts.
 *
 * Return: where to write the bytes, or NULL without memory or slots.
 */
void *sroce_tx_put_frag(struct sk_buff *skb, unsigned int len)
{
	int i = skb_shinfo(skb)->nr_frags;
	void *buf;

	if (i >= MAX_SKB_FRAGS || len > PAGE_SIZE)
		return NULL;
	buf = sroce_frag_alloc(len);
	if (!buf)
		return NULL;
	/* The buffer's page reference becomes the frag's. */
	skb_fill_page_desc(skb, i, virt_to_head_page(buf),
			   buf - page_address(virt_to_head_page(buf)), len);
	sroce_skb_grow(skb, len);
	return buf;
}

/**
 * sroce_tx_put_trailer - append the pad and room for the ICRC
 * @skb: the packet, transport headers and payload complete
 *
 * The pad count in the BTH was computed from the payload length; the
 * headers are all multiples of 4 bytes, so the same pad rounds the
 * whole packet up.  The pad is zeroed; the ICRC is the caller's.
 *
 * Return: where the ICRC goes, or NULL without memory.
 */
__le32 *sroce_tx_put_trailer(struct sk_buff *skb)
{
	unsigned int pad = -skb->len & 3;
	u8 *t;

	if (skb_is_nonlinear(skb))
		t = sroce_tx_put_frag(skb, pad + SROCE_ICRC_LEN);
	else
		t = skb_put(skb, pad + SROCE_ICRC_LEN);
	if (!t)
		return NULL;
	memset(t, 0, pad);
	return (__le32 *)(t + pad);
}
