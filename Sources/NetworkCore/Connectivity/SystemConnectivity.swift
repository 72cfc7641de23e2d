import Foundation

#if canImport(Network)
    import Network
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The operating system's own view of the network: on Apple platforms `NWPathMonitor`'s path (satisfied,
/// constrained); on Linux the kernel's interfaces, watched through a netlink socket (or read every two
/// seconds where one cannot be opened): online while an interface other than loopback is up and running
/// with an IPv4 address or an IPv6 address that is not link-local.
///
/// It watches from its creation until ``stop()`` or its release, on a thread of its own. One per process
/// is enough; pools may share it.
public final class SystemConnectivity: ConnectivityMonitor {
    private let state: ConnectivityState
    private let watcher: Watcher

    /// Reads the network's state now and watches it from now on.
    public init() {
        let state = ConnectivityState(Self.current())
        self.state = state
        watcher = Watcher(state: state)
    }

    deinit { watcher.stop() }

    /// What the system says now.
    public var connectivity: Connectivity { state.connectivity }

    /// See ``ConnectivityMonitor/observe(_:)``.
    public func observe(_ observer: @escaping @Sendable (Connectivity) -> Void) -> ConnectivityObservation {
        state.observe(observer)
    }

    /// Stops watching: what it says no longer changes. Stopping twice is harmless.
    public func stop() { watcher.stop() }
}

#if canImport(Network)
    extension SystemConnectivity {
        /// `NWPathMonitor` on a queue of its own.
        final class Watcher: @unchecked Sendable {  // immutable; NWPathMonitor is thread-safe.
            private let monitor = NWPathMonitor()

            init(state: ConnectivityState) {
                monitor.pathUpdateHandler = { path in state.set(SystemConnectivity.connectivity(of: path)) }
                monitor.start(queue: DispatchQueue(label: "NetworkCore.SystemConnectivity"))
            }

            func stop() { monitor.cancel() }
        }

        static func connectivity(of path: NWPath) -> Connectivity {
            guard path.status == .satisfied else { return .offline }
            return path.isConstrained ? .constrained : .online
        }

        /// Until the monitor's first path arrives: online, as a pool without a monitor assumes.
        static func current() -> Connectivity { .online }
    }
#else
    extension SystemConnectivity {
        /// A thread that waits for the kernel's link and address changes on a netlink socket, reads the
        /// interfaces again after each, and tells the state; woken by a pipe to stop.
        final class Watcher: @unchecked Sendable {  // the descriptors are set once; `stopped` is locked.
            private let wake: (read: Int32, write: Int32)
            private let stopped = Locked(false)

            init(state: ConnectivityState) {
                var ends: [Int32] = [-1, -1]
                if pipe(&ends) != 0 { ends = [-1, -1] }
                for end in ends where end >= 0 { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                wake = (ends[0], ends[1])
                let socket = Self.netlinkSocket()
                let thread = Thread { [wake, stopped] in
                    Self.watch(socket: socket, wake: wake.read, stopped: stopped, state: state)
                }
                thread.name = "NetworkCore.SystemConnectivity"
                thread.start()
            }

            func stop() {
                let first = stopped.withLock { stopped in
                    defer { stopped = true }
                    return !stopped
                }
                guard first, wake.write >= 0 else { return }
                var byte: UInt8 = 1
                _ = write(wake.write, &byte, 1)
            }

            /// Waits for netlink messages (or two seconds without a socket), reads the interfaces after each
            /// batch, until woken; closes every descriptor as it ends.
            private static func watch(socket: Int32, wake: Int32, stopped: Locked<Bool>, state: ConnectivityState) {
                defer {
                    if socket >= 0 { close(socket) }
                    if wake >= 0 { close(wake) }
                }
                var buffer = [UInt8](repeating: 0, count: 16 << 10)
                while !stopped.withLock({ $0 }) {
                    var waits = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
                    if socket >= 0 { waits.append(pollfd(fd: socket, events: Int16(POLLIN), revents: 0)) }
                    let ready = poll(&waits, nfds_t(waits.count), socket >= 0 ? -1 : 2_000)
                    if ready < 0, errno != EINTR { return }
                    if waits[0].revents != 0 { return }
                    if socket >= 0, waits[1].revents != 0 {
                        // Every message waiting is read: one look at the interfaces serves them all.
                        while recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
                    }
                    state.set(SystemConnectivity.current())
                }
            }

            /// A netlink socket subscribed to link, address and route changes; -1 where none can be opened.
            private static func netlinkSocket() -> Int32 {
                let descriptor = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue | SOCK_CLOEXEC.rawValue), 0)
                guard descriptor >= 0 else { return -1 }
                // struct sockaddr_nl { sa_family_t nl_family; unsigned short nl_pad; __u32 nl_pid; __u32 nl_groups; }
                // RTMGRP_LINK, RTMGRP_IPV4_IFADDR, RTMGRP_IPV4_ROUTE, RTMGRP_IPV6_IFADDR, RTMGRP_IPV6_ROUTE.
                var address = NetlinkAddress(
                    family: sa_family_t(AF_NETLINK), pad: 0, pid: 0, groups: 0x1 | 0x10 | 0x40 | 0x100 | 0x400)
                let bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(descriptor, $0, socklen_t(MemoryLayout<NetlinkAddress>.size))
                    }
                }
                guard bound == 0 else {
                    close(descriptor)
                    return -1
                }
                return descriptor
            }
        }

        /// The layout of Linux's `struct sockaddr_nl`, which Glibc's module does not declare.
        private struct NetlinkAddress {
            var family: sa_family_t
            var pad: UInt16
            var pid: UInt32
            var groups: UInt32
        }

        /// The interfaces now: online while one other than loopback is up and running with an IPv4 address,
        /// or an IPv6 address outside fe80::/10.
        static func current() -> Connectivity {
            var list: UnsafeMutablePointer<ifaddrs>?
            guard getifaddrs(&list) == 0 else { return .online }
            defer { freeifaddrs(list) }
            var entry = list
            while let interface = entry?.pointee {
                entry = interface.ifa_next
                let flags = Int(interface.ifa_flags)
                guard flags & IFF_UP != 0, flags & IFF_RUNNING != 0, flags & IFF_LOOPBACK == 0,
                    let address = interface.ifa_addr
                else { continue }
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    return .online
                case AF_INET6:
                    let linkLocal = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                        withUnsafeBytes(of: address.pointee.sin6_addr) { $0[0] == 0xfe && $0[1] & 0xc0 == 0x80 }
                    }
                    if !linkLocal { return .online }
                default:
                    continue
                }
            }
            return .offline
        }
    }
#endif
