"""Widgets of "Save and share": the save form, the share link and owner token, the session's
workspaces with their status, deleting, and the message about a link that cannot be opened.

User text (workspace names, file names, ids, store messages) is shown with ``st.text``,
``st.code``, ``st.dataframe`` or escaped with :func:`dashboard.text.plain` before markdown.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from . import export, messages, session, text, workspace_store, workspaces
from .constants import KEY_SHARE_RESULT, MAX_WORKSPACE_NAME_CHARS

MIB = 1024 * 1024


def problem_banner() -> None:
    """The message about the URL's workspace (deleted, expired, unknown ...), with a dismiss button."""
    found = workspaces.problem()
    if not found:
        return
    box = st.warning if found.get("level") == "warning" else st.error
    box(text.plain(found["message"]), icon=":material/link_off:")
    if st.button("Dismiss and drop the link from the address", key="ws_problem_dismiss"):
        workspaces.dismiss_problem()
        st.rerun()


def _default_name() -> str:
    systems = [f.system for f in session.of_kind("run")]
    stamp = pd.Timestamp.now(tz="UTC").strftime("%Y-%m-%d %H:%M UTC")
    return workspaces.default_name(systems, stamp)


def _show_result(prefix: str) -> None:
    result = st.session_state.get(KEY_SHARE_RESULT)
    if not result:
        return
    with st.container(border=True, key=f"{prefix}_result"):
        st.success(f"Saved workspace {text.plain(result['name'])}", icon=":material/cloud_done:")
        st.caption("Share link: opens this page with this view on the same data, in any browser, also after the "
                   "app restarts. Whoever has it can open the workspace.")
        st.code(result["link"], language=None, wrap_lines=False)  # one line that scrolls, with a copy button
        if result.get("token"):
            st.caption("Owner token: needed to delete this workspace from another browser session. It is shown only "
                       "now; keep it somewhere safe and never put it in a link. This session can delete the "
                       "workspace from the Data page without it.")
            st.code(result["token"], language=None, wrap_lines=False)
        if result.get("expires"):
            st.caption(f"The link stops working on {result['expires']}.")
        if st.button("Done", key=f"{prefix}_result_done", help="Hide the link and the owner token"):
            st.session_state.pop(KEY_SHARE_RESULT, None)
            st.rerun()


def save_form(prefix: str) -> None:
    """Name, optional expiry, "Save and share"; afterwards the link and the owner token."""
    store, error = workspace_store.get_store()
    if store is None:
        st.info(text.plain(f"Save and share is not available: {error}. Everything else works; files stay in this "
                         "browser session."), icon=":material/cloud_off:")
        return
    result_slot = st.container()
    st.caption(f"Files of up to {store.max_dataset_bytes / MIB:,.0f} MiB each and "
               f"{store.max_workspace_bytes / MIB:,.0f} MiB per workspace can be saved.")
    with st.form(f"{prefix}_form", border=False):
        name = st.text_input("Workspace name", key=f"{prefix}_name", max_chars=MAX_WORKSPACE_NAME_CHARS,
                             placeholder=_default_name())
        default = store.default_expiry_days
        days = st.number_input("Expires after (days)", min_value=1, max_value=3650, value=None, step=1,
                               key=f"{prefix}_days", placeholder=f"default: {default:g} days" if default else
                               "never (until deleted)", help="Leave empty to keep it until you delete it")
        submitted = st.form_submit_button("Save and share", icon=":material/share:", key=f"{prefix}_submit")
    if submitted:
        progress_slot = st.empty()
        try:
            with progress_slot.status("Saving the workspace", expanded=False) as status:
                saved, link = workspaces.save_session((name or "").strip() or _default_name(),
                                                      None if days is None else float(days),
                                                      progress=lambda label: status.update(label=text.plain(label)))
        except Exception as exc:
            progress_slot.empty()
            messages.show_error(exc)
        else:
            progress_slot.empty()  # the result box above says it was saved
            expires = saved.workspace.expires_at
            st.session_state[KEY_SHARE_RESULT] = {
                "id": saved.workspace_id, "name": saved.workspace.name, "link": link, "token": saved.owner_token,
                "expires": expires.strftime("%Y-%m-%d %H:%M UTC") if expires else None}
    with result_slot:
        _show_result(prefix)


def workspace_list() -> None:
    """The workspaces this session saved or opened: status, link, and a delete button (owner only)."""
    known = workspaces.known()
    try:
        owned = workspaces.owned_ids()
        summaries = workspaces.summaries() if known or owned else []
    except Exception as exc:
        messages.show_error(exc)
        return
    if not summaries:
        st.caption("No workspace saved or opened in this session yet.")
        return
    rows = []
    for s in summaries:
        entry = known.get(s.workspace_id, {})
        rows.append({"name": s.name or entry.get("name") or "", "status": s.status,
                     "yours": "saved here" if entry.get("role") == "saved" else
                     "yours" if s.workspace_id in owned else "opened",
                     "files": s.n_datasets, "MB": round(s.total_bytes / 1e6, 2),
                     "created (UTC)": s.created_at.strftime("%Y-%m-%d %H:%M") if s.created_at else "",
                     "expires (UTC)": s.expires_at.strftime("%Y-%m-%d %H:%M") if s.expires_at else "never",
                     "link": entry.get("link") or (workspaces.bare_link(s.workspace_id) if s.workspace_id in owned
                                                   else "")})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"link": st.column_config.LinkColumn("link", display_text="open")})
    for s in summaries:
        entry = known.get(s.workspace_id, {})
        if s.status != "active" or not (entry.get("token") or s.workspace_id in owned):
            continue
        if st.button(f"Delete {text.plain(s.name or s.workspace_id)}", key=f"data_ws_delete_{s.workspace_id}",
                     icon=":material/delete:"):
            try:
                workspaces.delete(s.workspace_id, entry.get("token"))
            except Exception as exc:
                messages.show_error(exc)
            else:
                st.rerun()


def delete_form() -> None:
    """Delete any workspace with its id (or share link) and its owner token."""
    with st.expander("Delete a workspace with its owner token"):
        with st.form("data_ws_delete_form", border=False):
            target = st.text_input("Workspace id or share link", key="data_ws_delete_id")
            token = st.text_input("Owner token", key="data_ws_delete_token", type="password")
            submitted = st.form_submit_button("Delete workspace", icon=":material/delete_forever:",
                                              key="data_ws_delete_submit")
        if submitted:
            workspace_id = workspaces.workspace_id_from(target)
            try:
                workspaces.delete(workspace_id, token or "")
            except Exception as exc:
                messages.show_error(exc)
            else:
                st.success("Deleted: its links now say so, and its files are removed once no other workspace "
                           "uses them.", icon=":material/check_circle:")


def data_page_section() -> None:
    """The Data page's "Save and share" section."""
    st.subheader("Save and share")
    st.caption("Saves every file of this session (the bytes as uploaded, stored once by their SHA-256) as a "
               "workspace and gives a link that opens the same page, view and data in any browser, also after the "
               "app restarts.")
    save_form("data_share")
    st.markdown("**Workspaces of this session**")
    workspace_list()
    delete_form()


def sidebar_tools(url_path: str) -> None:
    """Drawn after the page (so the report sees the page's charts): save and share, download report."""
    with st.sidebar:
        st.divider()
        current = workspaces.active()
        if current:
            st.caption("Workspace: " + text.plain(current["name"]))
        if url_path not in ("", "data"):  # the Data page (the default page, "/") has the full section
            with st.expander("Save and share", icon=":material/share:",
                             expanded=bool(st.session_state.get(KEY_SHARE_RESULT))):
                save_form("share")
        export.download_button()
