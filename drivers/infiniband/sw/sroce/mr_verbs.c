// SPDX-License-Identifier: GPL-2.0-only
/*
 * The MR verbs: the DMA MR of a kernel PD, fast-reg MRs (alloc_mr,
 * map_mr_sg), dereg_mr for every kind, and the table of them the device
 * installs; the user MR verbs are in mr_user.c.  See mr.h for the rules.
 */
#include <linux/log2.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "mr.h"
#include "mr_user.h"
#include "mr_verbs.h"
#include "odp.h"

/* How long dereg_mr waits for the data path before it complains. */
#define SROCE_MR_DEREG_WARN	(10 * HZ)

static struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sroce_mr *mr;
	int err;

	/* It reaches all kernel memory: never for a user PD. */
	if (ibpd->uobject)
		return ERR_PTR(-EINVAL);
	err = sroce_check_access(access, SROCE_ACCESS_DMA_MR);
	if (err)
		return ERR_PTR(err);

	mr = sroce_mr_alloc(ibpd, IB_MR_TYPE_DMA, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->state = SROCE_MR_VALID;

	err = sroce_mr_publish(mr);
	if (err) {
		sroce_mr_free_unpublished(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				    u32 max_num_sg)
{
	struct sroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG || !max_num_sg ||
	    max_num_sg > SROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);

	mr = sroce_mr_alloc(ibpd, IB_MR_TYPE_MEM_REG, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->blocks = kcalloc(max_num_sg, sizeof(*mr->blocks), GFP_KERNEL);
	mr->map_blocks = kcalloc(max_num_sg, sizeof(*mr->map_blocks),
				 GFP_KERNEL);
	if (!mr->blocks || !mr->map_blocks) {
		err = -ENOMEM;
		goto err_mr;
	}
	mr->max_blocks = max_num_sg;
	mr->block_shift = PAGE_SHIFT;
	mr->map_shift = PAGE_SHIFT;
	mr->state = SROCE_MR_FREE;

	err = sroce_mr_publish(mr);
	if (err)
		goto err_mr;
	return &mr->ibmr;

err_mr:
	sroce_mr_free_unpublished(mr);
	return ERR_PTR(err);
}

/* ib_sg_to_pages() callback: @addr is a kernel address (virt DMA). */
static int sroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->map_nblocks >= mr->max_blocks)
		return -ENOMEM;
	mr->map_blocks[mr->map_nblocks++] = addr;
	return 0;
}

/*
 * The core has put the block size in ibmr->page_size: any power of two
 * from 4 KiB to 2 GiB (SROCE_PAGE_SIZE_CAP).  ib_sg_to_pages() sets
 * ibmr->iova and ibmr->length; the new list takes effect at the next
 * IB_WR_REG_MR (sroce_mr_fast_reg()).
 */
static int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sgl,
			   int sg_nents, unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);
	u32 page_size = ibmr->page_size;
	int n;

	if (mr->type != IB_MR_TYPE_MEM_REG || !is_power_of_2(page_size) ||
	    !(page_size & SROCE_PAGE_SIZE_CAP))
		return -EINVAL;

	mr->map_nblocks = 0;
	n = ib_sg_to_pages(ibmr, sgl, sg_nents, sg_offset, sroce_set_page);
	mr->map_shift = ilog2(page_size);
	mr->map_first_off = ibmr->iova & (page_size - 1);
	return n;
}

/*
 * Erase the key, then wait for the lookups that hold the MR (see the
 * lifetime rule in mr.h) before unpinning its memory.  Lookups that
 * found the MR in the table just before the erase fail their
 * refcount_inc_not_zero(); the RCU grace period before the free covers
 * them.
 */
static int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_smr(ibmr);
	int err = 0;

	/* As rdma_rxe: not while windows are bound to it. */
	write_lock_bh(&mr->lock);
	if (mr->nr_mw)
		err = -EBUSY;
	else
		mr->dying = true;
	write_unlock_bh(&mr->lock);
	if (err)
		return err;

	xa_erase(&mr->sdev->mr_table.xa, mr->index);
	sroce_mr_unref(mr);
	while (!wait_for_completion_timeout(&mr->released,
					    SROCE_MR_DEREG_WARN))
		ibdev_warn(&mr->sdev->ibdev,
			   "MR %#x still in use; waiting\n", mr->ibmr.lkey);

	sroce_mr_user_release(mr);
	sroce_mr_free_lists(mr);
	kfree_rcu(mr, rcu);
	return 0;
}

static const struct ib_device_ops sroce_mr_ops = {
	.alloc_mr = sroce_alloc_mr,
	.dereg_mr = sroce_dereg_mr,
	.get_dma_mr = sroce_get_dma_mr,
	.map_mr_sg = sroce_map_mr_sg,
	.reg_user_mr = sroce_reg_user_mr,
	.advise_mr = sroce_advise_mr,
	.reg_user_mr_dmabuf = sroce_reg_user_mr_dmabuf,
	.rereg_user_mr = sroce_rereg_user_mr,
};

/* Install the MR verbs; called while the device is set up. */
void sroce_mr_set_ops(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &sroce_mr_ops);
}
