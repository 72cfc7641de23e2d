/// Just enough of DER to find a certificate's SubjectPublicKeyInfo (RFC 5280 §4.1): a certificate is a
/// SEQUENCE whose first element, the to-be-signed part, is a SEQUENCE of an optional `[0]` version, the
/// serial number, the signature algorithm, the issuer, the validity, the subject, then the key.
enum DERReader {
    /// One element: its tag, and where its contents and the whole element lie in the bytes.
    struct Element {
        let tag: UInt8
        let contents: Range<Int>
        let whole: Range<Int>
    }

    /// The DER bytes of the certificate's SubjectPublicKeyInfo, tag and length included; `nil` for bytes
    /// that are not a certificate.
    static func subjectPublicKeyInfo(ofCertificate der: [UInt8]) -> ArraySlice<UInt8>? {
        guard let certificate = element(in: der, at: 0), certificate.tag == 0x30,
            let toBeSigned = element(in: der, at: certificate.contents.lowerBound), toBeSigned.tag == 0x30
        else { return nil }
        var position = toBeSigned.contents.lowerBound
        var fields: [Element] = []
        while position < toBeSigned.contents.upperBound, fields.count < 7 {
            guard let field = element(in: der, at: position), field.whole.upperBound <= toBeSigned.contents.upperBound
            else { return nil }
            fields.append(field)
            position = field.whole.upperBound
        }
        // Without the version, the key is the sixth field.
        let index = fields.first?.tag == 0xA0 ? 6 : 5
        guard fields.count > index, fields[index].tag == 0x30 else { return nil }
        return der[fields[index].whole]
    }

    /// The element that begins at `start`, if its tag and length are there and it fits in the bytes.
    static func element(in bytes: [UInt8], at start: Int) -> Element? {
        guard start >= 0, start + 2 <= bytes.count else { return nil }
        let tag = bytes[start]
        // A high tag number (low five bits all set) is not used in a certificate's outer structure.
        guard tag & 0x1F != 0x1F else { return nil }
        var position = start + 1
        let first = Int(bytes[position])
        position += 1
        var length = 0
        if first < 0x80 {
            length = first
        } else {
            let count = first & 0x7F
            guard count >= 1, count <= 4, position + count <= bytes.count else { return nil }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[position])
                position += 1
            }
        }
        guard length <= bytes.count - position else { return nil }
        return Element(tag: tag, contents: position..<(position + length), whole: start..<(position + length))
    }
}
