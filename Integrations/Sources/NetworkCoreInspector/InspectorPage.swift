import Foundation

/// The inspector's page: one HTML file with its styles and script, shipped as the module's resource.
enum InspectorPage {
    /// The page's bytes, read once.
    static let html: Data = {
        guard let url = Bundle.module.url(forResource: "inspector", withExtension: "html"),
            let data = try? Data(contentsOf: url)
        else {
            return Data("<!DOCTYPE html><p>The inspector's page is missing from this build's resources.</p>".utf8)
        }
        return data
    }()
}
