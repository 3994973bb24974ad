package benchflame

import (
	"bytes"
	"regexp"
	"slices"
)

// pprof's flame graph page is made for its web server: most of its header
// (the View, Sample, Refine and Config menus, Download, the title's link)
// and the menu a right click on a frame opens (Show source, Focus, Ignore,
// Hide, Show from) are links to other views of the server or to the page
// itself with a query (?f=, ?si=) that only the server reads. From a file,
// each leads to a missing file, a directory listing or the same page
// unchanged. staticPage takes them out and keeps what the page's script
// does by itself: a click on a frame (a runtime or operator label frame
// too) draws the graph from it, the search box highlights the frames it
// matches and Enter draws the graph from them, and the title's link
// opens the profile's details.

// serverOnly are the start tags of the page's elements that need pprof's
// server, each removed with what it holds: the header's menus and the
// Save and Delete dialogs of the Config menu.
var serverOnly = []string{
	`<div id="view" class="menu-item">`,
	`<div id="sample" class="menu-item">`,
	`<div id="refine" class="menu-item">`,
	`<div id="config" class="menu-item">`,
	`<div id="download" class="menu-item">`,
	`<div id="dialog-overlay">`,
	`<div class="dialog" id="save-dialog">`,
	`<div class="dialog" id="delete-dialog">`,
}

// actionMenuRE matches the right-click menu. The element stays (the
// script fails without it), empty and hidden, and not a "submenu": pprof's
// menus open a submenu on a click on its parent, here the page's body.
// noContextMenu keeps it closed: a right click on a frame opens the
// browser's own menu.
var actionMenuRE = regexp.MustCompile(`(?s)<div id="action-menu" class="submenu">.*?<span id="action-title"></span>.*?</div>`)

// noContextMenu stops a right click on a frame before the frame's own
// handler, which would open the emptied action menu and hold the frame's
// details until the next click.
const noContextMenu = `<script>
    document.addEventListener('contextmenu', (e) => {
      if (e.target.closest && e.target.closest('#stack-chart')) e.stopPropagation();
    }, true);
  </script>
`

// staticPage returns page without the controls that need pprof's server.
func staticPage(page []byte) []byte {
	for _, start := range serverOnly {
		page = removeElement(page, start)
	}
	page = bytes.Replace(page, []byte(`<h1><a href="./">pprof</a></h1>`), []byte(`<h1>pprof</h1>`), 1)
	page = actionMenuRE.ReplaceAllLiteral(page, []byte(`<div id="action-menu" hidden><span id="action-title"></span></div>`))
	// Before the page's scripts, so that it runs first on every right
	// click.
	if i := bytes.Index(page, []byte("<script")); i >= 0 {
		page = slices.Concat(page[:i], []byte(noContextMenu+"  "), page[i:])
	}
	// pprof's script sets up the Config menu's dialogs as the viewer
	// starts, warning of each element it misses: after the script is
	// defined and before the viewer starts (the last script), it sets up
	// nothing.
	if i := bytes.LastIndex(page, []byte("<script>")); i >= 0 && bytes.Contains(page[i:], []byte("stackViewer(")) {
		page = slices.Concat(page[:i], []byte(noConfigManager+"  "), page[i:])
	}
	return page
}

// noConfigManager replaces pprof's initConfigManager, which binds the
// Config menu's Save and Delete dialogs, taken out with the menu.
const noConfigManager = `<script>
    initConfigManager = function () {};
  </script>
`

// removeElement removes the element whose start tag is start, with all it
// holds and the white space before it; page is unchanged if it has no
// such element.
func removeElement(page []byte, start string) []byte {
	i := bytes.Index(page, []byte(start))
	if i < 0 {
		return page
	}
	name := start[1:bytes.IndexAny([]byte(start), " >")]
	open, end := []byte("<"+name), []byte("</"+name+">")
	depth, j := 0, i
	for {
		o, c := bytes.Index(page[j:], open), bytes.Index(page[j:], end)
		if c < 0 {
			return page
		}
		if o >= 0 && o < c {
			depth++
			j += o + len(open)
			continue
		}
		depth--
		j += c + len(end)
		if depth == 0 {
			break
		}
	}
	k := len(bytes.TrimRight(page[:i], " \t\n"))
	return slices.Concat(page[:k], page[j:])
}
