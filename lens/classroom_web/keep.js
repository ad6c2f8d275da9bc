// The teacher's key kept in this browser across a reload, a laptop waking up or a replica
// restart (lens/classroom/ui/member.py): the default export is the function Streamlit's
// st.components.v2 calls. It shows nothing.
//
// `data.cookie` is the cookie's name, `data.value` "CODE.KEY" (or "" to forget it) and
// `data.max_age` its life in seconds (the class's). The server reads the cookie back on the
// next session's first run (st.context.cookies): a new session's websocket carries it, whatever
// replica it reaches. The key never goes back into the address bar, which a projector shows.

export default function (component) {
  const { cookie, value = "", max_age: maxAge = 0 } = component.data || {};
  if (!cookie) return undefined;
  const secure = location.protocol === "https:" ? "; Secure" : "";
  if (value) {
    document.cookie = `${cookie}=${encodeURIComponent(value)}; Max-Age=${maxAge}; Path=/; `
      + `SameSite=Strict${secure}`;
  } else {
    document.cookie = `${cookie}=; Max-Age=0; Path=/; SameSite=Strict${secure}`;
  }
  return undefined;
}
