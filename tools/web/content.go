package web

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html/charset"
)

// Output formats recorded in a fetch's metadata.
const (
	formatMarkdown = "markdown"
	formatText     = "text"
	formatBinary   = "binary"
)

// render turns a response body into what the model reads: HTML as markdown, text-like
// types as they are (decoded to UTF-8), anything else as a one-line description.
func render(data []byte, contentType, pageURL string) (string, string) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType == "" || mediaType == "application/octet-stream" {
		// Servers often omit or mislabel the type; sniff like a browser would.
		contentType = http.DetectContentType(data)
		mediaType, _, _ = mime.ParseMediaType(contentType)
	}
	switch {
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		text := decodeText(data, contentType)
		md, err := htmlToMarkdown(text, pageURL)
		if err != nil {
			return text, formatText // unconvertible HTML is still readable as source
		}
		return md, formatMarkdown
	case isText(mediaType) && !looksBinary(data):
		return decodeText(data, contentType), formatText
	}
	return fmt.Sprintf("[Binary content: %s, %s. Not shown; download it with a command if you need it.]",
		mediaType, sizeText(int64(len(data)))), formatBinary
}

// isText reports whether a media type is readable text: text/*, JSON, XML, JavaScript
// and the like.
func isText(mediaType string) bool {
	if strings.HasPrefix(mediaType, "text/") {
		return true
	}
	for _, suffix := range []string{"json", "xml", "javascript", "ecmascript", "yaml", "toml", "csv", "x-sh", "graphql"} {
		if strings.HasSuffix(mediaType, suffix) || strings.HasSuffix(mediaType, "+"+suffix) {
			return true
		}
	}
	return false
}

// looksBinary catches binary bodies labelled as text: NUL bytes do not occur in text.
func looksBinary(data []byte) bool {
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	return bytes.IndexByte(head, 0) >= 0
}

// decodeText converts the body to UTF-8 using the declared (or, for HTML, sniffed)
// charset. A body cut at the size limit may end mid-rune; that remnant is dropped.
func decodeText(data []byte, contentType string) string {
	if !utf8.Valid(data) {
		if r, err := charset.NewReader(bytes.NewReader(data), contentType); err == nil {
			var buf bytes.Buffer
			if _, err := buf.ReadFrom(r); err == nil {
				data = buf.Bytes()
			}
		}
	}
	return strings.ToValidUTF8(string(data), "")
}

// htmlToMarkdown converts a page, resolving relative links against its URL. The base
// plugin already removes script, style, noscript and similar non-content elements.
func htmlToMarkdown(page, pageURL string) (string, error) {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
	))
	for _, tag := range []string{"script", "style", "noscript", "iframe", "svg", "template"} {
		conv.Register.TagType(tag, converter.TagTypeRemove, converter.PriorityEarly)
	}
	// The full URL, not just the host, so that "next.html" resolves next to the page.
	md, err := conv.ConvertString(page, converter.WithDomain(pageURL))
	if err != nil {
		return "", fmt.Errorf("convert HTML to markdown: %w", err)
	}
	return strings.TrimSpace(md), nil
}
