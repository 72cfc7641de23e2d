// An opt-in fix for FoundationNetworking on Linux (swift-corelibs-foundation), for executables that link
// this product knowingly: NetworkCore itself does not depend on it.
//
// Before every transfer, FoundationNetworking's `_EasyHandle.set(url:)` calls
// `CFURLSessionCurlHostIsEqual` (CoreFoundation/CFURLSessionInterface.c) to check that libcurl reads the
// same host in the URL as Foundation does. Up to Swift 6.3 that function has two faults:
// - it releases libcurl's URL handle with `curl_free`, which frees the handle's own block but not the
//   scheme, host, port and path strings libcurl copied into it (`curl_url_cleanup` frees them all), so
//   every request leaks about 170 bytes of heap;
// - it compares libcurl's host, which keeps an IPv6 literal's brackets (`[::1]`), with Foundation's, which
//   has none (`::1`), so every request to an IPv6 literal fails with -1000 (NSURLErrorBadURL).
// Upstream fixed both (swift-corelibs-foundation issue #5496, pull request #5498). The definition below
// does the same: the check, IPv6 brackets stripped as upstream strips them, and the handle released with
// `curl_url_cleanup`.
//
// It is weak: linked into an executable with FoundationNetworking as a shared library (the default on
// Linux), the dynamic linker binds FoundationNetworking's call to it, the executable's coming first;
// linked with Swift's runtime statically (`--static-swift-stdlib`), FoundationNetworking's own strong
// definition is chosen and nothing changes. It is inert where the toolchain carries upstream's fix: on its
// first call it asks FoundationNetworking's own definition about `http://[::1]/`, and if that answers as
// upstream's does, every call goes to FoundationNetworking's. libcurl's functions are looked up at run
// time, so the package needs neither libcurl's headers nor a link against it; where they cannot be found,
// the check passes, as FoundationNetworking's does with a libcurl older than 7.62.
//
// The second fault is in FoundationNetworking's socket callback (`_MultiHandle.register(socket:…)`, up to
// Swift 6.3 at least): for each direction libcurl asks it to watch a socket for, it adds a dispatch source,
// but it never removes a source for a direction libcurl stops asking for while the socket stays registered.
// libcurl asks for writing while it sends a request, then for reading only. The write source stays, and a
// connected socket is writable nearly always, so it fires without pause until the socket is removed: each
// time FoundationNetworking calls libcurl, which has nothing to write. A request that waits 3 s for its
// answer, or a download over a slow link, keeps a processor busy all that time. The definition of
// `CFURLSession_multi_setopt_sf` below puts a callback of its own between libcurl and FoundationNetworking's:
// when libcurl drops a direction, it first tells FoundationNetworking that the socket is removed (both
// sources are cancelled and forgotten), then registers the socket again for what libcurl asks now, as
// FoundationNetworking already handles a socket that libcurl removes and adds again. It is weak too, and
// harmless on a FoundationNetworking that removes such sources itself.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // RTLD_DEFAULT
#endif

#include "FoundationNetworkingFixes.h"

#if defined(__linux__)

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

// From libcurl's <curl/urlapi.h>; the values are part of libcurl's stable ABI.
typedef struct Curl_URL CURLU;
enum { nc_CURLUPART_URL = 0, nc_CURLUPART_HOST = 5 };

static struct {
    CURLU *(*make)(void);
    int (*set)(CURLU *, int part, const char *content, unsigned int flags);
    int (*get)(const CURLU *, int part, char **content, unsigned int flags);
    void (*cleanup)(CURLU *);
    void (*free)(void *);
} curl;
static pthread_once_t curl_resolved = PTHREAD_ONCE_INIT;
/// FoundationNetworking's own definition, and whether it already has upstream's fix.
static bool (*foundation_check)(const char *, const char *);
static bool foundation_is_fixed;

static void resolve_curl(void) {
    curl.make = (CURLU * (*)(void)) dlsym(RTLD_DEFAULT, "curl_url");
    curl.set = (int (*)(CURLU *, int, const char *, unsigned int))dlsym(RTLD_DEFAULT, "curl_url_set");
    curl.get = (int (*)(const CURLU *, int, char **, unsigned int))dlsym(RTLD_DEFAULT, "curl_url_get");
    curl.cleanup = (void (*)(CURLU *))dlsym(RTLD_DEFAULT, "curl_url_cleanup");
    curl.free = (void (*)(void *))dlsym(RTLD_DEFAULT, "curl_free");
    foundation_check = (bool (*)(const char *, const char *))dlsym(RTLD_NEXT, "CFURLSessionCurlHostIsEqual");
    if (foundation_check && (void *)foundation_check != (void *)CFURLSessionCurlHostIsEqual) {
        foundation_is_fixed = foundation_check("http://[::1]:8080/", "::1");
    }
}

__attribute__((visibility("hidden"))) bool nc_curl_host_is_equal(const char *url, const char *expectedHost) {
    pthread_once(&curl_resolved, resolve_curl);
    if (foundation_is_fixed) return foundation_check(url, expectedHost);
    if (!curl.make || !curl.set || !curl.get || !curl.cleanup || !curl.free) return true;
    CURLU *handle = curl.make();
    if (!handle) return false;
    bool isEqual = false;
    if (curl.set(handle, nc_CURLUPART_URL, url, 0) == 0) {
        char *host = NULL;
        if (curl.get(handle, nc_CURLUPART_HOST, &host, 0) == 0 && host) {
            // libcurl keeps an IPv6 literal's brackets; Foundation's host has none.
            size_t length = strlen(host);
            if (length >= 2 && host[0] == '[' && host[length - 1] == ']') {
                isEqual = strlen(expectedHost) == length - 2 && strncmp(host + 1, expectedHost, length - 2) == 0;
            } else {
                isEqual = strcmp(host, expectedHost) == 0;
            }
            curl.free(host);
        }
    }
    curl.cleanup(handle);
    return isEqual;
}

// Exported under FoundationNetworking's name, as a weak alias: the hidden name above keeps the address of
// this very definition, wherever the exported name ends up bound.
bool CFURLSessionCurlHostIsEqual(const char *url, const char *expectedHost)
    __attribute__((weak, alias("nc_curl_host_is_equal")));

bool nc_curl_host_check_is_replaced(void) {
    pthread_once(&curl_resolved, resolve_curl);
    return !foundation_is_fixed && dlsym(RTLD_DEFAULT, "CFURLSessionCurlHostIsEqual") == (void *)nc_curl_host_is_equal;
}

// From libcurl's <curl/multi.h>, part of its stable ABI: the option that sets the socket callback and the
// directions the callback is told to watch.
enum {
    nc_CURLMOPT_SOCKETFUNCTION = 20001,
    nc_CURL_POLL_IN = 1,
    nc_CURL_POLL_OUT = 2,
    nc_CURL_POLL_INOUT = 3,
    nc_CURL_POLL_REMOVE = 4,
};
// FoundationNetworking's types for libcurl's (CFURLSessionInterface.h): a code or an option is an `int` in a
// struct, a handle a pointer.
typedef struct {
    int value;
} nc_multi_code;
typedef struct {
    int value;
} nc_multi_option;
typedef int (*nc_socket_function)(void *easy, int socket, int what, void *userp, void *socketp);

/// FoundationNetworking's socket callback, once a session has set it, and its own setter.
static _Atomic(nc_socket_function) foundation_socket_function;
static nc_multi_code (*foundation_setopt_sf)(void *, nc_multi_option, nc_socket_function);
static pthread_once_t setopt_resolved = PTHREAD_ONCE_INIT;
/// The directions libcurl last asked to watch each socket for, by descriptor (libcurl removes a socket before
/// it closes it, so a descriptor is one socket's at a time); sockets past the table are passed on untouched.
enum { nc_watched_sockets = 65536 };
static _Atomic unsigned char watched[nc_watched_sockets];

static void resolve_setopt(void) {
    foundation_setopt_sf =
        (nc_multi_code(*)(void *, nc_multi_option, nc_socket_function))dlsym(RTLD_NEXT, "CFURLSession_multi_setopt_sf");
}

/// libcurl's call, passed on to FoundationNetworking's callback; when it drops a direction of a socket that
/// FoundationNetworking watches (`socketp`, its sources), the socket is removed there first, then
/// registered afresh (`socketp` none: FoundationNetworking makes new sources and assigns them to the socket).
static int nc_socket_function_fixed(void *easy, int socket, int what, void *userp, void *socketp) {
    nc_socket_function forward = atomic_load(&foundation_socket_function);
    if (socket < 0 || socket >= nc_watched_sockets) return forward(easy, socket, what, userp, socketp);
    bool watches = what == nc_CURL_POLL_IN || what == nc_CURL_POLL_OUT || what == nc_CURL_POLL_INOUT;
    unsigned char before = atomic_exchange(&watched[socket], (unsigned char)(watches ? what : 0));
    if (watches && socketp && (before & ~what) != 0) {
        int removed = forward(easy, socket, nc_CURL_POLL_REMOVE, userp, socketp);
        if (removed != 0) return removed;
        return forward(easy, socket, what, userp, NULL);
    }
    return forward(easy, socket, what, userp, socketp);
}

__attribute__((visibility("hidden"))) nc_multi_code nc_multi_setopt_sf(
    void *multi, nc_multi_option option, nc_socket_function function) {
    pthread_once(&setopt_resolved, resolve_setopt);
    if (!foundation_setopt_sf) return (nc_multi_code){6};  // CURLM_UNKNOWN_OPTION: nothing to set it with
    if (option.value == nc_CURLMOPT_SOCKETFUNCTION && function) {
        // FoundationNetworking's callback is one function for every session; another is passed on as it is.
        nc_socket_function expected = NULL;
        if (atomic_compare_exchange_strong(&foundation_socket_function, &expected, function) || expected == function) {
            function = nc_socket_function_fixed;
        }
    }
    return foundation_setopt_sf(multi, option, function);
}

// Exported under FoundationNetworking's name, as a weak alias, as the host check above.
nc_multi_code CFURLSession_multi_setopt_sf(void *multi, nc_multi_option option, nc_socket_function function)
    __attribute__((weak, alias("nc_multi_setopt_sf")));

bool nc_socket_callback_is_replaced(void) {
    return atomic_load(&foundation_socket_function) != NULL &&
        dlsym(RTLD_DEFAULT, "CFURLSession_multi_setopt_sf") == (void *)nc_multi_setopt_sf;
}

#else

bool nc_curl_host_check_is_replaced(void) { return false; }
bool nc_socket_callback_is_replaced(void) { return false; }

#endif
