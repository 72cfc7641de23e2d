import Foundation

/// The directives of a `Cache-Control` field (RFC 9111 §5.2), of a response or of a request: the first
/// piece of the cache (issue "The caching subsystem"), read by its freshness rules.
///
/// Names are case-insensitive, values may be quoted, unknown directives are ignored. A `max-age` that is
/// not a number, or that appears twice with different values, reads as 0: RFC 9111 §4.2.1 asks a cache
/// to treat a response with invalid freshness information as stale. A number larger than a cache can
/// represent reads as 2,147,483,648 s (§1.2.2).
struct CacheControl: Equatable, Sendable {
    /// `max-age`: seconds the response stays fresh (a request's: the oldest answer it accepts).
    var maxAge: Int?
    /// `no-store`: nothing of the exchange may be stored.
    var noStore = false
    /// `no-cache`: a stored response must be validated with the server before each use (a field list, as
    /// in `no-cache="Set-Cookie"`, is read as the whole response).
    var noCache = false
    /// `must-revalidate`: once stale, never used without a successful validation (not even when offline).
    var mustRevalidate = false
    /// `private`: for one user's cache only, which a client's cache is.
    var isPrivate = false
    /// `public`: may be stored even where it otherwise could not, and heuristic freshness applies.
    var isPublic = false
    /// `immutable` (RFC 8246): while fresh, the response will not change; no revalidation on reload.
    var immutable = false
    /// `stale-while-revalidate` (RFC 5861): seconds a stale response may be used while a validation runs.
    var staleWhileRevalidate: Int?
    /// `stale-if-error` (RFC 5861): seconds a stale response may be used when the server fails.
    var staleIfError: Int?
    /// A request's `max-stale`: how stale an answer it accepts; without a value, any (`Int.max`).
    var maxStale: Int?
    /// A request's `min-fresh`: the answer must stay fresh this many seconds more.
    var minFresh: Int?
    /// A request's `only-if-cached`: answer from the cache or not at all.
    var onlyIfCached = false

    /// The largest number of seconds a cache represents (RFC 9111 §1.2.2).
    static let largestDelta = 2_147_483_648

    /// The directives of `field` (several `Cache-Control` lines joined with commas, as a response's
    /// fields are); none for `nil`.
    init(_ field: String?) {
        guard let field else { return }
        var maxAges: Set<Int> = []
        for (name, value) in Self.directives(of: field) {
            switch name {
            case "max-age": maxAges.insert(Self.seconds(value) ?? 0)
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "must-revalidate", "proxy-revalidate": mustRevalidate = true
            case "private": isPrivate = true
            case "public": isPublic = true
            case "immutable": immutable = true
            case "stale-while-revalidate": staleWhileRevalidate = Self.seconds(value)
            case "stale-if-error": staleIfError = Self.seconds(value)
            case "max-stale": maxStale = value == nil ? Int.max : Self.seconds(value)
            case "min-fresh": minFresh = Self.seconds(value)
            case "only-if-cached": onlyIfCached = true
            default: break
            }
        }
        if !maxAges.isEmpty { maxAge = maxAges.count == 1 ? maxAges.first : 0 }
    }

    /// Delta-seconds (digits only), capped at ``largestDelta``; `nil` when `value` is not one.
    static func seconds(_ value: String?) -> Int? {
        guard let value, !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return value.count > 10 ? largestDelta : min(Int(value) ?? largestDelta, largestDelta)
    }

    /// `field`'s directives in order: lowercased names, values unquoted (`nil` without `=`).
    static func directives(of field: String) -> [(String, String?)] {
        var directives: [(String, String?)] = []
        var piece = ""
        var quoted = false
        var escaped = false
        func flush() {
            let text = piece.trimmingWhitespace()
            piece = ""
            guard !text.isEmpty else { return }
            guard let equals = text.firstIndex(of: "=") else {
                directives.append((text.lowercased(), nil))
                return
            }
            let name = String(text[..<equals]).trimmingWhitespace().lowercased()
            var value = String(text[text.index(after: equals)...]).trimmingWhitespace()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\", with: "")
            }
            if !name.isEmpty { directives.append((name, value)) }
        }
        for character in field {
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ",", !quoted {
                flush()
                continue
            }
            piece.append(character)
        }
        flush()
        return directives
    }
}
