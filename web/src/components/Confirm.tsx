// A disruptive action asks first, in place: the button gives way to the question, its confirm
// button and a way back. Focus goes to the confirm button (a keyboard user is not left on the
// page's body), Escape or "keep" puts it back on the first button, and the question is announced.

import { type ReactNode, useEffect, useRef, useState } from "react";

export function ConfirmAction(props: {
  /** The first button's text, and its accessible name when `label` is not given. */
  action: string;
  label?: string;
  question: ReactNode;
  confirm: string;
  keep: string;
  pending: boolean;
  onConfirm: (done: () => void) => void;
}) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const actionRef = useRef<HTMLButtonElement>(null);
  const returnFocus = useRef(false);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
    else if (returnFocus.current) actionRef.current?.focus();
    returnFocus.current = false;
  }, [asking]);
  const keep = () => {
    returnFocus.current = true;
    setAsking(false);
  };
  if (!asking) {
    return (
      <button ref={actionRef} type="button" className="danger" aria-label={props.label} onClick={() => setAsking(true)}>
        {props.action}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={props.label ?? props.action} onKeyDown={(e) => e.key === "Escape" && keep()}>
      <span role="alert">{props.question}</span>{" "}
      <button ref={confirmRef} type="button" className="danger" disabled={props.pending} onClick={() => props.onConfirm(() => setAsking(false))}>
        {props.confirm}
      </button>{" "}
      <button type="button" onClick={keep}>
        {props.keep}
      </button>
    </span>
  );
}
