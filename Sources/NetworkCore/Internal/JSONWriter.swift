import Foundation

/// Writes a ``ParameterValue`` as compact JSON with sorted keys.
enum JSONWriter {
    static func data(for value: ParameterValue) throws(NetworkError) -> Data {
        var output = ""
        try write(value, path: "", to: &output)
        return Data(output.utf8)
    }

    private static func write(_ value: ParameterValue, path: String, to output: inout String) throws(NetworkError) {
        switch value {
        case .string(let string): writeString(string, to: &output)
        case .int(let number): output += String(number)
        case .uint(let number): output += String(number)
        case .double(let number):
            guard number.isFinite else {
                throw .encodingFailed(reason: "'\(path)' is \(number), which JSON cannot represent")
            }
            output += number.description
        case .bool(let flag): output += flag ? "true" : "false"
        case .null: output += "null"
        case .array(let items):
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," }
                try write(item, path: "\(path)[\(index)]", to: &output)
            }
            output += "]"
        case .dictionary(let dictionary):
            output += "{"
            for (index, key) in dictionary.keys.sorted().enumerated() {
                if index > 0 { output += "," }
                writeString(key, to: &output)
                output += ":"
                try write(dictionary[key]!, path: path.isEmpty ? key : "\(path).\(key)", to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ string: String, to output: inout String) {
        output += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
