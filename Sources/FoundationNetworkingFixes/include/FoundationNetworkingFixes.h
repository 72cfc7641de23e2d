#ifndef NETWORKCORE_FOUNDATION_NETWORKING_FIXES_H
#define NETWORKCORE_FOUNDATION_NETWORKING_FIXES_H

#include <stdbool.h>

/// FoundationNetworking's check, before each transfer, that libcurl reads the same host in a URL as
/// Foundation does; this product's definition replaces the one that leaks and fails IPv6 literals (see
/// FoundationNetworkingFixes.c), in an executable that links it. On other platforms it is not defined.
bool CFURLSessionCurlHostIsEqual(const char *_Nonnull url, const char *_Nonnull expectedHost);

/// Whether the process's host check is this product's rather than FoundationNetworking's own: true on
/// Linux when the executable links this product and the toolchain's FoundationNetworking lacks upstream's
/// fix; false where the fix is not needed (the toolchain has it) or cannot take effect (Swift's runtime
/// linked statically, other platforms).
bool nc_curl_host_check_is_replaced(void);

/// Whether libcurl's socket callback goes through this product's (see FoundationNetworkingFixes.c), which
/// stops FoundationNetworking watching a socket for a direction libcurl no longer asks for: true on Linux
/// once a `URLSession` of the process has set up its libcurl handle, in an executable that links this
/// product; false before that, with Swift's runtime linked statically, and on other platforms.
bool nc_socket_callback_is_replaced(void);

#endif
