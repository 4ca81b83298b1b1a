// SPDX-License-Identifier: GPL-2.0-only
/*
 * MR memory, as the data path reaches it: copies between an MR and a
 * kernel buffer or a packet, page frags attached to a packet (zero copy,
 * see tx.c), 8-byte atomics, and the SGE lists of work requests.  Every
 * access goes through an MR from sroce_mr_lookup() (mr.c); the rules are
 * in mr.h and mem.h.
 */
#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>
#include <kunit/visibility.h>
#include <sroce/compat.h>

#include "mem.h"
#include "mr.h"
#include "odp.h"
#include "tx.h"

/*
 * Map the MR memory at @iova: at most @len bytes of it that are
 * contiguous in the kernel's address space, their number in *@n.
 * Unmap with sroce_mr_unmap().  The range has been checked; the index
 * checks only keep a fast-reg MR that its owner remaps while in use
 * (a ULP bug) inside its arrays.
 */
static void *sroce_mr_map(struct sroce_mr *mr, u64 iova, u32 len, u32 *n)
{
	unsigned int shift;
	u64 off, size;

	switch (mr->type) {
	case IB_MR_TYPE_DMA:
		*n = len;
		return ib_virt_dma_to_ptr(iova);
	case IB_MR_TYPE_USER:
		if (sroce_mr_is_odp(mr))
			return sroce_odp_va(mr, iova, len, n);
		off = iova - mr->iova + mr->page_off;
		if (off >> PAGE_SHIFT >= mr->npages)
			return NULL;
		*n = min_t(u64, len, PAGE_SIZE - offset_in_page(off));
		return kmap_local_page(mr->pages[off >> PAGE_SHIFT]) +
		       offset_in_page(off);
	case IB_MR_TYPE_MEM_REG:
		shift = READ_ONCE(mr->block_shift);
		off = iova - READ_ONCE(mr->iova) + READ_ONCE(mr->first_off);
		if (off >> shift >= READ_ONCE(mr->nblocks))
			return NULL;
		size = 1ULL << shift;
		*n = min_t(u64, len, size - (off & (size - 1)));
		return ib_virt_dma_to_ptr(mr->blocks[off >> shift] +
					  (off & (size - 1)));
	default:
		return NULL;
	}
}

static void sroce_mr_unmap(struct sroce_mr *mr, void *va)
{
	if (mr->type == IB_MR_TYPE_USER && !sroce_mr_is_odp(mr))
		kunmap_local(va);
}

/*
 * The page behind the MR memory at @iova, to attach to a packet: the
 * offset in it in *@off and how many bytes (at most @len) in *@n.  NULL
 * if the memory is not in the direct map (vmalloc memory of a ULP); the
 * caller copies it then.
 */
static struct page *sroce_mr_page(struct sroce_mr *mr, u64 iova, u32 len,
				  u32 *off, u32 *n)
{
	void *va;
	u64 o;

	if (mr->type == IB_MR_TYPE_USER && !sroce_mr_is_odp(mr)) {
		o = iova - mr->iova + mr->page_off;
		if (o >> PAGE_SHIFT >= mr->npages)
			return NULL;
		*off = offset_in_page(o);
		*n = min_t(u32, len, PAGE_SIZE - *off);
		return mr->pages[o >> PAGE_SHIFT];
	}
	/* DMA, fast-reg and ODP MRs: kernel addresses, nothing to unmap. */
	va = sroce_mr_map(mr, iova, len, n);
	if (!va || !virt_addr_valid(va))
		return NULL;
	*off = offset_in_page(va);
	*n = min_t(u32, *n, PAGE_SIZE - *off);
	return virt_to_page(va);
}

/*
 * The range is inside the MR and, for an ODP MR, its pages are mapped
 * for the access (@write) until the MR is put: -EAGAIN if not (a fault
 * is asked for), -EFAULT if they cannot be (odp.h).
 */
static int sroce_mr_range(struct sroce_mr *mr, u64 iova, u64 length,
			  bool write)
{
	if (!sroce_range_ok(READ_ONCE(mr->iova), READ_ONCE(mr->length), iova,
			    length))
		return -ERANGE;
	if (unlikely(sroce_mr_is_odp(mr)))
		return sroce_odp_ready(mr, iova, length, write);
	return 0;
}

/**
 * sroce_mr_ready - check that MR memory can be accessed without a fault
 * @mr: an MR from sroce_mr_lookup()
 * @iova: where in the MR
 * @length: bytes
 * @write: the access writes
 *
 * For an access spread over several steps (a READ's responses), checked
 * first as a whole; each step checks again.  Any context.
 *
 * Return: 0; -ERANGE; for an ODP MR -EAGAIN (a fault is asked for) or
 * -EFAULT (the memory cannot be faulted in).
 */
int sroce_mr_ready(struct sroce_mr *mr, u64 iova, u64 length, bool write)
{
	return sroce_mr_range(mr, iova, length, write);
}

/**
 * sroce_mr_copy - copy between MR memory and a kernel buffer
 * @mr: an MR from sroce_mr_lookup()
 * @iova: where in the MR (a kernel address for a DMA MR)
 * @buf: the buffer
 * @len: bytes to copy
 * @dir: SROCE_TO_MR or SROCE_FROM_MR
 *
 * The range is checked again (access rights are not: the lookup did
 * that).  Any context.
 *
 * Return: 0, -ERANGE or -EFAULT.
 */
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		  enum sroce_copy_dir dir)
{
	u8 *p = buf;
	int err;

	err = sroce_mr_range(mr, iova, len, dir == SROCE_TO_MR);
	if (err)
		return err;

	while (len) {
		void *va;
		u32 n;

		va = sroce_mr_map(mr, iova, len, &n);
		if (!va)
			return -EFAULT;
		if (dir == SROCE_TO_MR)
			memcpy(va, p, n);
		else
			memcpy(p, va, n);
		sroce_mr_unmap(mr, va);
		p += n;
		iova += n;
		len -= n;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_copy);

/*
 * Copy @n bytes of @skb at @off to @to with copy_page(), if they are a
 * whole page (@to page-aligned) that is one page-aligned page of a frag,
 * as a payload of a full MTU of 4096 sent from page-aligned memory is.
 * copy_page() is the kernel's own loop for exactly this; under QEMU's TCG
 * it also moves 8 bytes a step where 6.1's memcpy() ("rep movsb") moves
 * one.
 *
 * Return: true if it copied; false if the bytes are not such a page.
 */
static bool sroce_skb_copy_page(const struct sk_buff *skb, u32 off, void *to,
				u32 n)
{
	const struct skb_shared_info *shinfo = skb_shinfo(skb);
	u32 head = skb_headlen(skb), i;

	if (n != PAGE_SIZE || !PAGE_ALIGNED(to) || off < head)
		return false;
	off -= head;
	for (i = 0; i < shinfo->nr_frags; i++) {
		const skb_frag_t *frag = &shinfo->frags[i];
		u32 size = skb_frag_size(frag), pg_off;
		void *from;

		if (off >= size) {
			off -= size;
			continue;
		}
		pg_off = skb_frag_off(frag) + off;
		if (size - off < PAGE_SIZE || !PAGE_ALIGNED(pg_off))
			return false;
		from = kmap_local_page(nth_page(skb_frag_page(frag),
						pg_off / PAGE_SIZE));
		copy_page(to, from);
		kunmap_local(from);
		return true;
	}
	return false;
}

/* Copy @n bytes between @va and @skb at @off. */
static int sroce_skb_xfer(struct sk_buff *skb, u32 off, void *va, u32 n,
			  enum sroce_copy_dir dir)
{
	if (off + n <= skb_headlen(skb)) {
		u8 *p = skb->data + off;

		if (dir == SROCE_TO_MR)
			memcpy(va, p, n);
		else
			memcpy(p, va, n);
		return 0;
	}

	if (dir == SROCE_FROM_MR)
		return skb_store_bits(skb, off, va, n);
	if (sroce_skb_copy_page(skb, off, va, n))
		return 0;
	return skb_copy_bits(skb, off, va, n);
}

/**
 * sroce_mr_copy_skb - copy between MR memory and an sk_buff
 * @mr: an MR from sroce_mr_lookup()
 * @iova: where in the MR
 * @skb: the packet; its linear part and frags are both fine.  For
 *	SROCE_FROM_MR the bytes must exist already (skb_put them) and
 *	the skb must be writable (not a clone)
 * @skb_off: offset of the data in @skb (from skb->data)
 * @len: bytes to copy
 * @dir: SROCE_TO_MR (receive) or SROCE_FROM_MR (send)
 *
 * Any context.
 *
 * Return: 0, -ERANGE, or -EFAULT (also when @skb is too short).
 */
int sroce_mr_copy_skb(struct sroce_mr *mr, u64 iova, struct sk_buff *skb,
		      int skb_off, u32 len, enum sroce_copy_dir dir)
{
	u32 off = skb_off;
	int err;

	err = sroce_mr_range(mr, iova, len, dir == SROCE_TO_MR);
	if (err)
		return err;
	if (skb_off < 0 || len > skb->len || off > skb->len - len)
		return -EFAULT;

	while (len) {
		void *va;
		u32 n;

		va = sroce_mr_map(mr, iova, len, &n);
		if (!va)
			return -EFAULT;
		err = sroce_skb_xfer(skb, off, va, n, dir);
		sroce_mr_unmap(mr, va);
		if (err)
			return err;
		off += n;
		iova += n;
		len -= n;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_copy_skb);

/**
 * sroce_mr_attach_skb - attach MR memory to a packet as page frags
 * @mr: an MR from sroce_mr_lookup()
 * @iova: where in the MR
 * @skb: the packet being built
 * @len: bytes to attach
 *
 * Zero copy: the frags point at the MR's pages (see tx.c).  Stops early
 * where a page cannot be attached; the caller copies the rest.  Any
 * context.
 *
 * Return: the bytes attached, or -ERANGE.
 */
int sroce_mr_attach_skb(struct sroce_mr *mr, u64 iova, struct sk_buff *skb,
			u32 len)
{
	u32 done = 0;
	int err;

	err = sroce_mr_range(mr, iova, len, false);
	if (err)
		return err;
	while (done < len) {
		struct page *page;
		u32 off, n;

		page = sroce_mr_page(mr, iova + done, len - done, &off, &n);
		if (!page || !sroce_tx_add_page(skb, page, off, n))
			break;
		done += n;
	}
	return done;
}

/*
 * Map the 8 bytes at @iova for an atomic: 8-byte aligned in the MR and
 * in the kernel mapping (a user MR's iova may be aligned while the memory
 * behind it is not).  Unmap with sroce_mr_unmap().
 */
static int sroce_mr_map_u64(struct sroce_mr *mr, u64 iova, u64 **va)
{
	int err;
	u32 n;

	if (!IS_ALIGNED(iova, sizeof(u64)))
		return -EINVAL;
	err = sroce_mr_range(mr, iova, sizeof(u64), true);
	if (err)
		return err;
	*va = sroce_mr_map(mr, iova, sizeof(u64), &n);
	if (!*va)
		return -EFAULT;
	if (n < sizeof(u64) || !IS_ALIGNED((unsigned long)*va, sizeof(u64))) {
		sroce_mr_unmap(mr, *va);
		return -EINVAL;
	}
	return 0;
}

/**
 * sroce_mr_atomic - an 8-byte atomic on MR memory
 * @mr: an MR from sroce_mr_lookup() with IB_ACCESS_REMOTE_ATOMIC
 * @iova: the address; must be 8-byte aligned
 * @cmp_swap: compare and swap; else fetch and add
 * @compare: the value to compare with (compare and swap)
 * @swap_add: the value to swap in, or to add
 * @orig: the value before the operation
 *
 * The values are in CPU byte order.  The operation is a cmpxchg on the
 * kernel mapping of the memory (the direct map for a DMA MR and for the
 * pinned pages of a user MR), so it is atomic against other sroce
 * atomics on any QP and CPU, and even against CPU atomics of the
 * program that owns the memory; no lock is taken.  Any context.
 *
 * Return: 0, -ERANGE, -EINVAL (misaligned, also when a user MR's iova
 * is aligned but the memory behind it is not), -EFAULT.
 */
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, bool cmp_swap, u64 compare,
		    u64 swap_add, u64 *orig)
{
	u64 *va, old;
	int err;

	err = sroce_mr_map_u64(mr, iova, &va);
	if (err)
		return err;
	if (cmp_swap) {
		*orig = cmpxchg64(va, compare, swap_add);
	} else {
		old = READ_ONCE(*va);
		while (!try_cmpxchg64(va, &old, old + swap_add))
			;
		*orig = old;
	}
	sroce_mr_unmap(mr, va);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_atomic);

/**
 * sroce_mr_atomic_write - an ATOMIC WRITE's 8 bytes, as one store
 * @mr: an MR from sroce_mr_lookup() with IB_ACCESS_REMOTE_WRITE
 * @iova: the address; must be 8-byte aligned
 * @value: the 8 bytes, in the order they go to memory
 *
 * One 8-byte store on the kernel mapping of the memory, so a reader
 * never sees part of it; a release, so whoever sees it also sees what
 * the requests before it wrote (IBA oA19-25: an ATOMIC WRITE is placed
 * after the writes before it).  Any context.
 *
 * Return: 0, -ERANGE, -EINVAL (misaligned, as for sroce_mr_atomic()),
 * -EFAULT.
 */
int sroce_mr_atomic_write(struct sroce_mr *mr, u64 iova, const u8 *value)
{
	u64 *va, v;
	int err;

	err = sroce_mr_map_u64(mr, iova, &va);
	if (err)
		return err;
	memcpy(&v, value, sizeof(v));
	/* Pairs with the reader's acquire: the earlier writes show first. */
	smp_store_release(va, v);
	sroce_mr_unmap(mr, va);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_atomic_write);

/*
 * The SGE list's next span from @cur: the SGE it lies in, and in *@n how
 * many bytes of it (at most @len) follow the cursor.  Exhausted and empty
 * SGEs are skipped; the cursor is not moved past the span (the caller
 * adds what it used to cur->off).  Each call moves to a later SGE or
 * returns, so a walk is bounded by @num_sge.
 *
 * Return: the SGE, or NULL when the list ends first.
 */
static const struct ib_sge *sroce_sgl_next(const struct ib_sge *sgl,
					   unsigned int num_sge,
					   struct sroce_sgl_cursor *cur,
					   u32 len, u32 *n)
{
	for (; cur->sge < num_sge; cur->sge++, cur->off = 0) {
		const struct ib_sge *sge = &sgl[cur->sge];

		if (cur->off < sge->length) {
			*n = min(len, sge->length - cur->off);
			return sge;
		}
	}
	return NULL;
}

/*
 * As sroce_sgl_next(), and the MR of the span looked up (lkey, @pd, the
 * rights @access) for those bytes, its address in *@iova.  Release the
 * MR with sroce_mr_put().
 *
 * Return: the MR, or NULL with the error in *@err (-ENOSPC when the
 * list ends first).
 */
static struct sroce_mr *sroce_sgl_next_mr(struct sroce_dev *sdev,
					  struct sroce_pd *pd,
					  const struct ib_sge *sgl,
					  unsigned int num_sge,
					  struct sroce_sgl_cursor *cur,
					  u32 len, int access, u64 *iova,
					  u32 *n, int *err)
{
	const struct ib_sge *sge = sroce_sgl_next(sgl, num_sge, cur, len, n);

	if (!sge) {
		*err = -ENOSPC;
		return NULL;
	}
	*iova = sge->addr + cur->off;
	return sroce_mr_lookup(sdev, pd, sge->lkey, false, access, *iova, *n,
			       err);
}

/*
 * The loop behind sroce_sgl_copy() and sroce_sgl_copy_skb(): @skb NULL
 * means @buf.  Each SGE is looked up (with its lkey, @pd, and the rights
 * @dir needs) for the part of it this call touches.
 */
static int sroce_sgl_xfer(struct sroce_dev *sdev, struct sroce_pd *pd,
			  const struct ib_sge *sgl, unsigned int num_sge,
			  struct sroce_sgl_cursor *cur, u8 *buf,
			  struct sk_buff *skb, int skb_off, u32 len,
			  enum sroce_copy_dir dir)
{
	int access = dir == SROCE_TO_MR ? IB_ACCESS_LOCAL_WRITE : 0;

	while (len) {
		struct sroce_mr *mr;
		u64 iova;
		int err;
		u32 n;

		mr = sroce_sgl_next_mr(sdev, pd, sgl, num_sge, cur, len, access,
				       &iova, &n, &err);
		if (!mr)
			return err;
		if (skb)
			err = sroce_mr_copy_skb(mr, iova, skb, skb_off, n, dir);
		else
			err = sroce_mr_copy(mr, iova, buf, n, dir);
		sroce_mr_put(mr);
		if (err)
			return err;

		cur->off += n;
		len -= n;
		if (skb)
			skb_off += n;
		else
			buf += n;
	}
	return 0;
}

/**
 * sroce_sgl_copy - copy between a local SGE list and a kernel buffer
 * @sdev: the device
 * @pd: the PD of the QP that owns the list
 * @sgl: the SGEs (a kernel copy: a user WQE must be copied out of the
 *	ring first); struct rxe_sge has the same layout
 * @num_sge: entries in @sgl
 * @cur: where to start; advanced past the bytes copied
 * @buf: the buffer
 * @len: bytes to copy
 * @dir: SROCE_TO_MR (needs IB_ACCESS_LOCAL_WRITE) or SROCE_FROM_MR
 *
 * Any context.  On failure @cur is left somewhere in between;
 * the work request fails anyway.
 *
 * Return: 0, an error from sroce_mr_lookup() or sroce_mr_copy(), or
 * -ENOSPC when the list ends first.
 */
int sroce_sgl_copy(struct sroce_dev *sdev, struct sroce_pd *pd,
		   const struct ib_sge *sgl, unsigned int num_sge,
		   struct sroce_sgl_cursor *cur, void *buf, u32 len,
		   enum sroce_copy_dir dir)
{
	return sroce_sgl_xfer(sdev, pd, sgl, num_sge, cur, buf, NULL, 0, len,
			      dir);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_sgl_copy);

/**
 * sroce_sgl_copy_skb - copy between a local SGE list and an sk_buff
 * @sdev: the device
 * @pd: the PD of the QP that owns the list
 * @sgl: the SGEs
 * @num_sge: entries in @sgl
 * @cur: where to start; advanced past the bytes copied
 * @skb: the packet (see sroce_mr_copy_skb())
 * @skb_off: offset of the data in @skb
 * @len: bytes to copy
 * @dir: SROCE_TO_MR (receive) or SROCE_FROM_MR (send)
 *
 * As sroce_sgl_copy().
 *
 * Return: as sroce_sgl_copy().
 */
int sroce_sgl_copy_skb(struct sroce_dev *sdev, struct sroce_pd *pd,
		       const struct ib_sge *sgl, unsigned int num_sge,
		       struct sroce_sgl_cursor *cur, struct sk_buff *skb,
		       int skb_off, u32 len, enum sroce_copy_dir dir)
{
	if (WARN_ON_ONCE(!skb))
		return -EFAULT;
	return sroce_sgl_xfer(sdev, pd, sgl, num_sge, cur, NULL, skb, skb_off,
			      len, dir);
}

/**
 * sroce_sgl_attach_skb - put the data of a local SGE list into a packet
 * @sdev: the device
 * @pd: the PD of the QP that owns the list
 * @sgl: the SGEs
 * @num_sge: entries in @sgl
 * @cur: where to start; advanced past the bytes added
 * @skb: the packet being built
 * @len: bytes to add
 *
 * As sroce_sgl_copy() from the list, but the memory is attached to @skb
 * as page frags where it can be (sroce_mr_attach_skb()), and copied into
 * a frag of the packet's own from the first byte where it cannot.  Any
 * context.
 *
 * Return: as sroce_sgl_copy(), or -ENOMEM.
 */
int sroce_sgl_attach_skb(struct sroce_dev *sdev, struct sroce_pd *pd,
			 const struct ib_sge *sgl, unsigned int num_sge,
			 struct sroce_sgl_cursor *cur, struct sk_buff *skb,
			 u32 len)
{
	void *buf;

	while (len) {
		struct sroce_mr *mr;
		u64 iova;
		int err;
		u32 n;

		mr = sroce_sgl_next_mr(sdev, pd, sgl, num_sge, cur, len, 0,
				       &iova, &n, &err);
		if (!mr)
			return err;
		err = sroce_mr_attach_skb(mr, iova, skb, n);
		sroce_mr_put(mr);
		if (err < 0)
			return err;
		cur->off += err;
		len -= err;
		if (err < n)
			break;
	}
	if (!len)
		return 0;
	buf = sroce_tx_put_frag(skb, len);
	if (!buf)
		return -ENOMEM;
	return sroce_sgl_copy(sdev, pd, sgl, num_sge, cur, buf, len,
			      SROCE_FROM_MR);
}

/**
 * sroce_sgl_advance - move a cursor without copying
 * @sgl: the SGEs
 * @num_sge: entries in @sgl
 * @cur: the cursor
 * @len: bytes to skip
 *
 * For a requester that resends from the middle of a message.  No key is
 * checked.  Any context.
 *
 * Return: 0, or -ENOSPC when the list ends first.
 */
int sroce_sgl_advance(const struct ib_sge *sgl, unsigned int num_sge,
		      struct sroce_sgl_cursor *cur, u32 len)
{
	while (len) {
		u32 n;

		if (!sroce_sgl_next(sgl, num_sge, cur, len, &n))
			return -ENOSPC;
		cur->off += n;
		len -= n;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_sgl_advance);
