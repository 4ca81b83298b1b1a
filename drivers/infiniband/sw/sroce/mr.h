/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Memory regions (mr.c): the per-device key table, an MR's allocation,
 * and the checked lookups the data path starts from; what it does with
 * the MR it found (copies, atomics, SGE lists) is in mem.h, the verbs
 * that make MRs in mr_user.h and mr_verbs.h.
 *
 * Keys.  An MR's lkey and rkey are the same value, index << 8 | key: the
 * index (1 .. SROCE_MAX_MR) comes from the device's table, allocated
 * cyclically so that a freed index is reused as late as possible; the low
 * byte starts random and a fast-reg MR's owner changes it with each
 * IB_WR_REG_MR.  Index 0 is never allocated, so the device's
 * local_dma_lkey (0, not advertised) never names an MR.  Kernel ULPs use
 * pd->local_dma_lkey, the lkey of the DMA MR the core creates in
 * __ib_alloc_pd() with sroce_get_dma_mr() because sroce does not set
 * IBK_LOCAL_DMA_LKEY; that MR belongs to the PD, so lookups with the QP's
 * PD find it.
 *
 * Kinds.  A DMA MR (get_dma_mr, kernel PDs only) covers the whole kernel
 * address space: with virt DMA an SGE address from a kernel ULP is a
 * kernel virtual address.  A user MR (reg_user_mr) pins pages with
 * ib_umem_get(); its memory is reached with kmap_local_page().  A
 * dma-buf MR (reg_user_mr_dmabuf) is a user MR whose pages are those
 * behind the exporter's vmap of the buffer (mr_user.c says which exporters
 * that serves); the data path reaches them as a user MR's.
 * rereg_user_mr changes a user MR in place and keeps its keys: new
 * memory and iova (IB_MR_REREG_TRANS: the new pages are pinned before
 * and the old ones unpinned after the swap), PD or access; not while
 * windows are bound to it (-EBUSY).  An access sees the registration
 * before or the one after, whole (see @lock).  A
 * fast-reg MR (alloc_mr) is a list of up to max_num_sg blocks of
 * mr->ibmr.page_size bytes given by map_mr_sg(), made valid by
 * sroce_mr_fast_reg() and invalid again by sroce_mr_invalidate(); its
 * blocks are kernel virtual addresses too.
 *
 * Lifetime.  The table holds an MR from the end of its creation verb
 * until dereg_mr erases it; the lookup path finds it under RCU and takes
 * a reference with refcount_inc_not_zero().  dereg_mr erases the index,
 * drops the table's reference, waits until every other reference is gone
 * and only then unpins the memory; the structure itself is freed after an
 * RCU grace period.  The rule for the data path: a reference from
 * sroce_mr_lookup() may be held while one packet or one work request
 * step is processed, never across waiting for the peer (a timer, an ACK,
 * the next packet of a message), because dereg_mr would wait for it.
 * Look the MR up again for the next packet.
 *
 * Contexts.  The verbs (get_dma_mr, reg_user_mr, rereg_user_mr,
 * alloc_mr, map_mr_sg, dereg_mr) and the table init/destroy run in
 * process context and may sleep.  Everything else declared here may be called from any context,
 * softirq included, except hard interrupt context; nothing of it sleeps.
 *
 * Errors from lookups, copies and atomics (negative errnos):
 *   -ENOKEY       no MR carries this key (index unused, or key byte differs)
 *   -EKEYREVOKED  the MR is not valid (a fast-reg MR not registered yet, or
 *                 invalidated)
 *   -EPERM        the MR belongs to another PD
 *   -EACCES       the MR does not grant the access asked for
 *   -ERANGE       the range is not inside the MR
 *   -EINVAL       an atomic on an address that is not 8-byte aligned
 *   -ENOSPC       an SGE list is shorter than the data (sroce_sgl_*)
 *   -EFAULT       the skb is shorter than asked for, or an internal error
 *   -EBUSY        (invalidation) windows are bound to the MR
 * sroce_mr_wc_status() turns them into a work completion status.
 */
#ifndef SROCE_MR_H
#define SROCE_MR_H

#include <linux/completion.h>
#include <linux/iosys-map.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <sroce/compat.h>

struct dma_buf;
struct ib_umem;
struct sk_buff;
struct sroce_dev;
struct sroce_pd;

#define SROCE_ACCESS_REMOTE	(IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_FLUSH_GLOBAL)

/*
 * The access flags each kind of MR may be given (sroce_check_access()).
 * MW_BIND lets memory windows be bound to the MR (mw.c); the
 * IB_ACCESS_OPTIONAL bits are hints a device may ignore.  FLUSH_GLOBAL
 * is in SROCE_ACCESS_REMOTE.  ON_DEMAND makes a user MR an ODP MR
 * (odp.h).  Zero-based MRs and FLUSH_PERSISTENT (sroce does not tell
 * persistent memory apart) are not supported.
 */
#define SROCE_ACCESS_USER_MR	(IB_ACCESS_LOCAL_WRITE | SROCE_ACCESS_REMOTE | \
				 IB_ACCESS_MW_BIND | IB_ACCESS_HUGETLB | \
				 IB_ACCESS_OPTIONAL)
#define SROCE_ACCESS_ODP_MR	(SROCE_ACCESS_USER_MR | IB_ACCESS_ON_DEMAND)
#define SROCE_ACCESS_FAST_REG	(IB_ACCESS_LOCAL_WRITE | SROCE_ACCESS_REMOTE | \
				 IB_ACCESS_MW_BIND | IB_ACCESS_OPTIONAL)
#define SROCE_ACCESS_DMA_MR	(IB_ACCESS_LOCAL_WRITE | SROCE_ACCESS_REMOTE)

/* sroce_mr_lookup() @length for a FLUSH of a whole MR: no range check */
#define SROCE_MR_WHOLE		U64_MAX
#define SROCE_ACCESS_FLUSH	(IB_ACCESS_FLUSH_GLOBAL | \
				 IB_ACCESS_FLUSH_PERSISTENT)

/**
 * struct sroce_mr_table - the MRs of one device, by key index
 * @xa: index -> struct sroce_mr; readers use RCU, writers the xa_lock
 * @next: where the cyclic allocation continues
 */
struct sroce_mr_table {
	struct xarray xa;
	u32 next;
};

enum sroce_mr_state {
	SROCE_MR_FREE,		/* fast-reg MR without a registration */
	SROCE_MR_VALID,
};

/**
 * struct sroce_mr - a memory region
 * @ibmr: the core's object; must stay first
 * @sdev: the device
 * @pd: the protection domain; a user MR's changes under @lock (rereg)
 * @ref: one for the table, one per lookup that found the MR
 * @released: completed when @ref drops to zero
 * @lock: fast-reg MR: registration and invalidation take it for writing;
 *	user MR: rereg_user_mr does.  A lookup of either holds it for
 *	reading until sroce_mr_put(), so an access sees one registration
 *	whole, and LOCAL_INV, SEND_WITH_INV or a rereg returns only once
 *	no access is using the old one (a rereg then unpins the old
 *	pages: nothing but packets in flight, with page references of
 *	their own, can still point at them).  The windows bound to an MR
 *	change only under it for writing (mw.h).  A DMA MR never changes
 *	and its lookups do not take it (sroce_mr_locked()).
 * @nr_mw: windows bound to the MR; under @lock.  While there are any,
 *	dereg_mr fails with -EBUSY and invalidation with -EBUSY
 * @dying: dereg_mr has started; no window may be bound any more.
 *	Under @lock
 * @type: IB_MR_TYPE_DMA, IB_MR_TYPE_USER or IB_MR_TYPE_MEM_REG
 * @state: a user or DMA MR is always valid
 * @index: the table index, @key >> 8, fixed at creation
 * @key: the current lkey == rkey
 * @access: IB_ACCESS_* flags granted
 * @iova: the first address of the MR (a kernel address for a DMA MR)
 * @length: its length in bytes
 * @umem: user MR: the pinned memory, or an ODP MR's ib_umem_odp
 *	(nothing pinned, odp.h; an implicit one's root, odp_implicit.h);
 *	NULL for a dma-buf MR
 * @odp: @umem is an ODP MR's, set before the MR is published
 * @dmabuf: dma-buf MR (reg_user_mr_dmabuf): the buffer, referenced,
 *	vmapped and in CPU access from registration to dereg
 * @dmabuf_map: its kernel mapping; @pages are the pages behind it
 * @odp_err_va: ODP MR: the user address of the page a fault failed
 *	for, with bit 0 set; 0 if none (odp.h)
 * @odp_err_when: ODP MR: when, in jiffies
 * @odp_faults: ODP MR: data path faults done for it (rdma res)
 * @pages: user MR: the pinned pages
 * @npages: user MR: entries in @pages
 * @page_off: user MR: offset of @iova in pages[0]
 *	(a user MR's @pd, @access, @iova, @length and memory change only
 *	under @lock for writing, by rereg_user_mr)
 * @blocks: fast-reg MR: kernel addresses of the blocks of the current
 *	registration, @max_blocks of them
 * @map_blocks: fast-reg MR: the list map_mr_sg fills, copied to @blocks
 *	by the next registration: the owner may map the next one while
 *	the current one is still in use
 * @max_blocks: fast-reg MR: max_num_sg from alloc_mr
 * @nblocks: fast-reg MR: blocks of the current registration
 * @block_shift: fast-reg MR: log2 of the block size of the registration
 * @first_off: fast-reg MR: offset of @iova in blocks[0]
 * @map_nblocks: fast-reg MR: blocks mapped by the last map_mr_sg
 * @map_shift: fast-reg MR: their block size, log2
 * @map_first_off: fast-reg MR: offset of the first byte mapped in blocks[0]
 * @rcu: frees the structure after lookups that raced dereg are done
 */
struct sroce_mr {
	struct ib_mr ibmr;
	struct sroce_dev *sdev;
	struct sroce_pd *pd;
	refcount_t ref;
	struct completion released;
	rwlock_t lock;			/* fast-reg registration vs accesses */
	unsigned int nr_mw;
	bool dying;
	enum ib_mr_type type;
	enum sroce_mr_state state;
	u32 index;
	u32 key;
	int access;
	u64 iova;
	u64 length;

	struct ib_umem *umem;
	bool odp;
	struct dma_buf *dmabuf;
	struct iosys_map dmabuf_map;
	unsigned long odp_err_va;
	unsigned long odp_err_when;
	atomic_long_t odp_faults;
	struct page **pages;
	unsigned int npages;
	unsigned int page_off;

	u64 *blocks;
	u64 *map_blocks;
	unsigned int max_blocks;
	unsigned int nblocks;
	unsigned int block_shift;
	unsigned int first_off;
	unsigned int map_nblocks;
	unsigned int map_shift;
	unsigned int map_first_off;

	struct rcu_head rcu;
};

/**
 * sroce_range_ok - whether an access lies inside an MR
 * @mr_iova: the MR's first address
 * @mr_len: the MR's length in bytes
 * @iova: the first address accessed
 * @len: the number of bytes accessed
 *
 * Return: true if [@iova, @iova + @len) is inside [@mr_iova, @mr_iova +
 * @mr_len), computed without overflow; a zero-length access may sit just
 * past the end.
 */
static inline bool sroce_range_ok(u64 mr_iova, u64 mr_len, u64 iova, u64 len)
{
	return iova >= mr_iova && len <= mr_len &&
	       iova - mr_iova <= mr_len - len;
}

/* An ODP user MR (IB_ACCESS_ON_DEMAND): pages mapped on demand (odp.h). */
static inline bool sroce_mr_is_odp(const struct sroce_mr *mr)
{
	return mr->odp;
}

static inline struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

void sroce_mr_table_init(struct sroce_mr_table *table);
void sroce_mr_table_destroy(struct sroce_mr_table *table);

/* Registration (process context), for mr_user.c and mr_verbs.c */
int sroce_check_access(int access, int supported);
struct sroce_mr *sroce_mr_alloc(struct ib_pd *ibpd, enum ib_mr_type type,
				int access);
int sroce_mr_publish(struct sroce_mr *mr);
void sroce_mr_free_lists(struct sroce_mr *mr);
void sroce_mr_free_unpublished(struct sroce_mr *mr);

/*
 * Whether lookups hold @mr->lock for reading until sroce_mr_put(): every
 * MR whose registration can change, a fast-reg MR (IB_WR_REG_MR,
 * invalidation) and a user MR (rereg_user_mr; the windows bound to it).
 * Only a DMA MR, which never changes, is left alone.  The type is fixed,
 * so lookup and put agree.
 */
static inline bool sroce_mr_locked(const struct sroce_mr *mr)
{
	return mr->type != IB_MR_TYPE_DMA;
}

struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key);
struct sroce_mr *sroce_mr_lookup(struct sroce_dev *sdev, struct sroce_pd *pd,
				 u32 key, bool remote, int access, u64 iova,
				 u64 length, int *err);

/* Drop a reference (a lookup's, or the table's). */
static inline void sroce_mr_unref(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/**
 * sroce_mr_put - end an access: drop a reference from sroce_mr_lookup()
 * @mr: the MR; may be NULL
 *
 * A fast-reg MR may be invalidated or registered anew from here on.
 */
static inline void sroce_mr_put(struct sroce_mr *mr)
{
	if (!mr)
		return;
	if (sroce_mr_locked(mr)) {
		/* sparse: sroce_mr_lookup() took it, see there */
		__acquire(&mr->lock);
		read_unlock_bh(&mr->lock);
	}
	sroce_mr_unref(mr);
}

int sroce_mr_fast_reg(struct sroce_mr *mr, struct sroce_pd *pd, u32 key,
		      int access);
int sroce_mr_invalidate(struct sroce_dev *sdev, struct sroce_pd *pd, u32 key,
			bool remote);

enum ib_wc_status sroce_mr_wc_status(int err, bool remote);

#endif /* SROCE_MR_H */
