/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MR memory as the data path reaches it (mem.c): copies between MR
 * memory and a buffer or a packet, zero-copy page frags, atomics, and
 * SGE lists.  Every function takes an MR from sroce_mr_lookup(), or looks
 * each SGE up itself; the contexts and error codes are those of mr.h.
 */
#ifndef SROCE_MEM_H
#define SROCE_MEM_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct sk_buff;
struct sroce_dev;
struct sroce_mr;
struct sroce_pd;

enum sroce_copy_dir {
	SROCE_TO_MR,		/* write MR memory */
	SROCE_FROM_MR,		/* read MR memory */
};

/**
 * struct sroce_sgl_cursor - a position in an SGE list
 * @sge: index of the current SGE
 * @off: bytes of it already done
 *
 * Zero it to start at the beginning; the sroce_sgl_* helpers advance it,
 * so a message spread over several packets continues where the previous
 * packet stopped.
 */
struct sroce_sgl_cursor {
	unsigned int sge;
	u32 off;
};

int sroce_mr_ready(struct sroce_mr *mr, u64 iova, u64 length, bool write);
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		  enum sroce_copy_dir dir);
int sroce_mr_copy_skb(struct sroce_mr *mr, u64 iova, struct sk_buff *skb,
		      int skb_off, u32 len, enum sroce_copy_dir dir);
int sroce_mr_attach_skb(struct sroce_mr *mr, u64 iova, struct sk_buff *skb,
			u32 len);
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, bool cmp_swap, u64 compare,
		    u64 swap_add, u64 *orig);
int sroce_mr_atomic_write(struct sroce_mr *mr, u64 iova, const u8 *value);

int sroce_sgl_copy(struct sroce_dev *sdev, struct sroce_pd *pd,
		   const struct ib_sge *sgl, unsigned int num_sge,
		   struct sroce_sgl_cursor *cur, void *buf, u32 len,
		   enum sroce_copy_dir dir);
int sroce_sgl_copy_skb(struct sroce_dev *sdev, struct sroce_pd *pd,
		       const struct ib_sge *sgl, unsigned int num_sge,
		       struct sroce_sgl_cursor *cur, struct sk_buff *skb,
		       int skb_off, u32 len, enum sroce_copy_dir dir);
int sroce_sgl_attach_skb(struct sroce_dev *sdev, struct sroce_pd *pd,
			 const struct ib_sge *sgl, unsigned int num_sge,
			 struct sroce_sgl_cursor *cur, struct sk_buff *skb,
			 u32 len);
int sroce_sgl_advance(const struct ib_sge *sgl, unsigned int num_sge,
		      struct sroce_sgl_cursor *cur, u32 len);

#endif /* SROCE_MEM_H */
