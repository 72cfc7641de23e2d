#ifndef NETWORKCORE_FOUNDATION_NETWORKING_FIXES_H
#define NETWORKCORE_FOUNDATION_NETWORKING_FIXES_H

#include <stdbool.h>

/// FoundationNetworking's check, before each transfer, that libcurl reads the same host in a URL as
/// Foundation does; NetworkCore's definition replaces the one that leaks (see FoundationNetworkingFixes.c).
/// Declared here so that tests can call it; on other platforms it is not defined.
bool CFURLSessionCurlHostIsEqual(const char *_Nonnull url, const char *_Nonnull expectedHost);

/// Whether the process calls NetworkCore's definition of `CFURLSessionCurlHostIsEqual` rather than
/// FoundationNetworking's own: true on Linux when NetworkCore is linked into the executable (SwiftPM's
/// default); false where the fix cannot take effect (Swift's runtime linked statically, other platforms).
bool nc_curl_host_check_is_replaced(void);

#endif
