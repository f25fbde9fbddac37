from django.urls import path

from beyond_site.chat import attachments, conversations, memories, run_actions, saved_tasks, views

app_name = "chat"
urlpatterns = [
    path("", views.home, name="home"),
    path("w/<slug:slug>/", views.workspace, name="workspace"),
    path("w/<slug:slug>/c/<id:conversation_id>/", views.workspace, name="conversation"),
    path("w/<slug:slug>/send/", views.send, name="send"),
    path("w/<slug:slug>/upload/", views.upload, name="upload"),
    path("w/<slug:slug>/conversations/", conversations.search, name="conversations"),
    path("w/<slug:slug>/c/<id:conversation_id>/rename/", conversations.rename, name="conversation_rename"),
    path("w/<slug:slug>/c/<id:conversation_id>/delete/", conversations.delete, name="conversation_delete"),
    path("w/<slug:slug>/attachments/<id:document_id>/remove/", attachments.remove, name="attachment_remove"),
    path("w/<slug:slug>/c/<id:conversation_id>/uploads/", attachments.uploads, name="uploads"),
    path("w/<slug:slug>/runs/<id:run_id>/stop/", run_actions.stop, name="stop"),
    path("w/<slug:slug>/runs/<id:run_id>/again/", run_actions.again, name="run_again"),
    path("w/<slug:slug>/runs/<id:run_id>/steps/<id:index>/redo/", run_actions.redo_step, name="redo"),
    path("w/<slug:slug>/runs/<id:run_id>/regenerate/", run_actions.regenerate_run, name="regenerate"),
    path("w/<slug:slug>/runs/<id:run_id>/edit/", run_actions.edit_task, name="edit"),
    path("w/<slug:slug>/memories/", memories.add, name="memory_add"),
    path("w/<slug:slug>/memories/<id:memory_id>/", memories.edit, name="memory_edit"),
    path("w/<slug:slug>/memories/<id:memory_id>/delete/", memories.delete, name="memory_delete"),
    path("w/<slug:slug>/tasks/", saved_tasks.library, name="saved_tasks"),
    path("w/<slug:slug>/tasks/add/", saved_tasks.add, name="saved_task_add"),
    path("w/<slug:slug>/tasks/<id:task_id>/", saved_tasks.edit, name="saved_task_edit"),
    path("w/<slug:slug>/tasks/<id:task_id>/delete/", saved_tasks.delete, name="saved_task_delete"),
    path("w/<slug:slug>/tasks/<id:task_id>/promote/", saved_tasks.promote, name="saved_task_promote"),
]
