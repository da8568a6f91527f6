/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef GST_BWSS_HTTP_SRC_H
#define GST_BWSS_HTTP_SRC_H

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>

G_BEGIN_DECLS

/* The element's fields, and the lock that guards each, are in
 * gstbwsshttpsrc-private.h. */
#define GST_TYPE_BWSS_HTTP_SRC (gst_bwss_http_src_get_type ())
G_DECLARE_FINAL_TYPE (GstBwssHttpSrc, gst_bwss_http_src, GST, BWSS_HTTP_SRC, GstPushSrc)

G_END_DECLS

#endif
