import Foundation

/// The files of NetworkCore's stores on disk (the cache's answers, the durable writes): a magic line, a
/// JSON header and a body, each after its length, and a SHA-256 of everything before it, so that a file torn
/// by a crash, truncated or altered reads as no record, never as a wrong one. Written whole to a temporary
/// file renamed into place.
enum RecordFile {
    /// The bytes of a record.
    static func encode(magic: [UInt8], header: Data, body: Data) -> Data {
        var data = Data(magic)
        data.append(contentsOf: bytes(of: UInt64(header.count)))
        data.append(header)
        data.append(contentsOf: bytes(of: UInt64(body.count)))
        data.append(body)
        var digest = SHA256()
        digest.update(data)
        data.append(contentsOf: digest.finalize())
        return data
    }

    /// The header and body of a whole record with this magic line; `nil` for anything else.
    static func decode(_ data: Data, magic: [UInt8]) -> (header: Data, body: Data)? {
        let bytes = [UInt8](data)
        let headerStart = magic.count + 8
        guard bytes.count >= headerStart + 8 + 32, bytes.starts(with: magic) else { return nil }
        var digest = SHA256()
        digest.update(data.prefix(bytes.count - 32))
        guard digest.finalize() == Array(bytes[(bytes.count - 32)...]) else { return nil }
        guard let headerLength = integer(bytes, at: magic.count), headerLength <= bytes.count - headerStart
        else { return nil }
        let headerEnd = headerStart + headerLength
        guard let bodyLength = integer(bytes, at: headerEnd), headerEnd + 8 + bodyLength == bytes.count - 32
        else { return nil }
        return (Data(bytes[headerStart..<headerEnd]), Data(bytes[(headerEnd + 8)..<(headerEnd + 8 + bodyLength)]))
    }

    /// Writes `data` to a temporary file beside `url` (named `<name>.<random>.tmp`), then renames it into
    /// place. Returns whether it is there; a failed write (a full disk) leaves nothing behind.
    static func write(_ data: Data, to url: URL) -> Bool {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            "\(url.deletingPathExtension().lastPathComponent).\(UInt64.random(in: .min ... .max)).tmp")
        do {
            try data.write(to: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            return false
        }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            return false
        }
        return true
    }

    /// Opens `directory` for a store, creating it if needed, and deletes the temporary files of writes a
    /// crash cut short. Returns the names of the other files in it, and how many it deleted.
    /// - Throws: ``NetworkError/fileAccessFailed(path:reason:)`` when it cannot be made or is a file.
    static func openDirectory(_ directory: URL) throws(NetworkError) -> (names: [String], unfinished: Int) {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw .fileAccessFailed(path: directory.path, reason: "it is a file, not a directory")
            }
        } else {
            do {
                try manager.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw .fileAccessFailed(path: directory.path, reason: "the directory cannot be created")
            }
        }
        var names: [String] = []
        var unfinished = 0
        for name in (try? manager.contentsOfDirectory(atPath: directory.path)) ?? [] {
            if name.hasSuffix(".tmp") {
                try? manager.removeItem(atPath: directory.appendingPathComponent(name).path)
                unfinished += 1
            } else {
                names.append(name)
            }
        }
        return (names, unfinished)
    }

    private static func bytes(of value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    /// The little-endian integer at `offset`, if it fits in an `Int` and in the file.
    private static func integer(_ bytes: [UInt8], at offset: Int) -> Int? {
        guard offset + 8 <= bytes.count else { return nil }
        let value = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << ($1 * 8) }
        return value <= UInt64(bytes.count) ? Int(value) : nil
    }
}

/// Headers as a record's JSON header keeps them: `[[name, value], …]` sorted by name, so that the same headers
/// always make the same bytes. Anything but pairs fails to decode, and so makes the file no record.
struct RecordHeaders: Codable {
    let fields: [String: String]

    init(_ fields: [String: String]) { self.fields = fields }

    init(from decoder: any Decoder) throws {
        let pairs = try decoder.singleValueContainer().decode([[String]].self)
        guard pairs.allSatisfy({ $0.count == 2 }) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a pair"))
        }
        fields = Dictionary(pairs.map { ($0[0], $0[1]) }) { _, last in last }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(fields.keys.sorted().map { [$0, fields[$0]!] })
    }
}
