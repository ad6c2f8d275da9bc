"""A live class's Streamlit part: the class page's parts and what a student or the teacher sees
on a step (the package's other modules import no Streamlit).

    member.py         who this browser is in a class (the store's handle, the teacher's cookie)
    join.py           starting and joining a class: codes, nicknames, the join link and its QR
    teacher.py        the teacher's class page: the step, the two votes, the reveal, results
    student.py        a student's cards on a step, following the teacher's step
    view.py           what the class sees of one task's answers (the tally drawn)
    concept_check.py  the concept check as a class takes it, and its gain
"""
